package cri_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/test/support/testimage"
)

// The lifecycle over the CRI runtime runs an init container, then the main container, which
// turns ready by its exec readiness probe.
func TestLifecycleRunsAPodToRunning(t *testing.T) {
	importImage(t, logImage, testimage.Options{Cmd: []string{"log", "--every", "50ms"}})
	ctx, rt, p := runLifecycle(t)
	var err error

	pod := testPod("lifecycle", logImage)
	pod.Spec.InitContainers = []corev1.Container{{
		Name: "init", Image: logImage, ImagePullPolicy: corev1.PullIfNotPresent, Args: []string{"exit", "--code", "0"},
	}}
	main := &pod.Spec.Containers[0]
	main.ImagePullPolicy = corev1.PullIfNotPresent
	main.Args = []string{"serve", "--port", strconv.Itoa(freePort(t))}
	main.ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"workload", "cat", testimage.MarkerPath}}},
		PeriodSeconds: 1, TimeoutSeconds: 5, SuccessThreshold: 1, FailureThreshold: 3,
	}
	require.NoError(t, p.CreatePod(ctx, pod))

	var status *corev1.PodStatus
	require.Eventually(t, func() bool {
		status, err = p.GetPodStatus(ctx, pod.Namespace, pod.Name)
		if err != nil || status.Phase != corev1.PodRunning {
			return false
		}
		for _, c := range status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "last status %+v", status)
	require.Len(t, status.InitContainerStatuses, 1)
	init := status.InitContainerStatuses[0]
	require.NotNil(t, init.State.Terminated)
	assert.Equal(t, int32(0), init.State.Terminated.ExitCode)
	require.Len(t, status.ContainerStatuses, 1)
	c := status.ContainerStatuses[0]
	assert.True(t, strings.HasPrefix(c.ContainerID, "containerd://"), c.ContainerID)
	assert.NotEmpty(t, c.ImageID)
	assert.NotNil(t, c.State.Running)

	require.NoError(t, p.DeletePod(ctx, pod))
	sandboxGone(t, ctx, rt, pod.UID)
}

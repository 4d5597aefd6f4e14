package cri_test

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/test/support/testimage"
)

const ephemeralImage = "localhost/test/cri-ephemeral:1"

// The upstream "Ephemeral Containers [NodeConformance]" specs against containerd: ephemeral
// containers added to a running pod (UpdatePod, as the ephemeralcontainers subresource) start in
// its sandbox without touching its container; the one with a targetContainerName sees the
// target's processes (PID 1 of its namespace is the target's "serve"), the one without sees its
// own; both are reported in ephemeralContainerStatuses and their logs are read by name.
func TestEphemeralContainersAgainstContainerd(t *testing.T) {
	importImage(t, ephemeralImage, testimage.Options{Cmd: []string{"sleep"}})
	ctx, rt, p := runLifecycle(t)
	var err error

	pod := testPod("ephemeral", ephemeralImage)
	main := &pod.Spec.Containers[0]
	main.ImagePullPolicy = corev1.PullIfNotPresent
	main.Args = []string{"serve", "--bind", "127.0.0.1", "--port", strconv.Itoa(freePort(t))}
	require.NoError(t, p.CreatePod(ctx, pod))
	var status *corev1.PodStatus
	require.Eventually(t, func() bool {
		status, err = p.GetPodStatus(ctx, pod.Namespace, pod.Name)
		return err == nil && status.Phase == corev1.PodRunning && status.ContainerStatuses[0].State.Running != nil
	}, 30*time.Second, 50*time.Millisecond, "last status %+v", status)
	mainID := status.ContainerStatuses[0].ContainerID

	updated := pod.DeepCopy()
	debug := func(name, target string) corev1.EphemeralContainer {
		return corev1.EphemeralContainer{TargetContainerName: target, EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: name, Image: ephemeralImage, ImagePullPolicy: corev1.PullIfNotPresent, Args: []string{"cat", "/proc/1/cmdline"},
			TerminationMessagePolicy: corev1.TerminationMessageReadFile, TerminationMessagePath: corev1.TerminationMessagePathDefault,
		}}
	}
	updated.Spec.EphemeralContainers = []corev1.EphemeralContainer{debug("debugger", "main"), debug("own", "")}
	require.NoError(t, p.UpdatePod(ctx, updated))
	require.Eventually(t, func() bool {
		status, err = p.GetPodStatus(ctx, pod.Namespace, pod.Name)
		if err != nil || len(status.EphemeralContainerStatuses) != 2 {
			return false
		}
		for _, s := range status.EphemeralContainerStatuses {
			if s.State.Terminated == nil {
				return false
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "last status %+v", status)
	for _, s := range status.EphemeralContainerStatuses {
		assert.Equal(t, int32(0), s.State.Terminated.ExitCode, s.Name)
		assert.True(t, strings.HasPrefix(s.ContainerID, "containerd://"), s.ContainerID)
		assert.False(t, s.Ready)
	}
	assert.Equal(t, mainID, status.ContainerStatuses[0].ContainerID, "the pod's container untouched")
	assert.Equal(t, int32(0), status.ContainerStatuses[0].RestartCount)
	assert.Equal(t, corev1.PodRunning, status.Phase)

	logOf := func(name string) string {
		r, err := p.GetContainerLogs(ctx, pod.Namespace, pod.Name, name, provider.ContainerLogOpts{})
		require.NoError(t, err)
		defer r.Close()
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		return string(b)
	}
	assert.Contains(t, logOf("debugger"), "serve", "the target's process namespace: its PID 1 is the target's")
	assert.NotContains(t, logOf("own"), "serve", "no target: a namespace of its own")
	assert.Contains(t, logOf("own"), "cat")

	require.NoError(t, p.DeletePod(ctx, updated))
	sandboxGone(t, ctx, rt, pod.UID)
}

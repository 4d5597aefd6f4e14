package cri_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/testimage"
)

// Termination messages through containerd, as the upstream "Container Runtime blackbox test on
// terminated container" specs check them: a file written at the default path as root, at a
// custom path as a non-root user, and a failed container's log with FallbackToLogsOnError.
func TestTerminationMessages(t *testing.T) {
	importImage(t, logImage, testimage.Options{Cmd: []string{"log", "--every", "50ms"}})
	ctx, _, p := runLifecycle(t)
	var err error

	pod := testPod("termination", logImage)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	ctr := func(name string, args []string, path string, policy corev1.TerminationMessagePolicy, uid int64) corev1.Container {
		return corev1.Container{Name: name, Image: logImage, ImagePullPolicy: corev1.PullIfNotPresent, Args: args,
			TerminationMessagePath: path, TerminationMessagePolicy: policy, SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To(uid)}}
	}
	pod.Spec.Containers = []corev1.Container{
		ctr("default-path", []string{"write", "/dev/termination-log", "DONE"}, "/dev/termination-log", corev1.TerminationMessageReadFile, 0),
		ctr("custom-path", []string{"write", "/dev/termination-custom-log", "DONE"}, "/dev/termination-custom-log", corev1.TerminationMessageReadFile, 1000),
		ctr("from-logs", []string{"cat", "/missing"}, "/dev/termination-log", corev1.TerminationMessageFallbackToLogsOnError, 0),
	}
	require.NoError(t, p.CreatePod(ctx, pod))

	var status *corev1.PodStatus
	require.Eventually(t, func() bool {
		status, err = p.GetPodStatus(ctx, pod.Namespace, pod.Name)
		return err == nil && status.Phase == corev1.PodFailed
	}, 60*time.Second, 50*time.Millisecond, "last status %+v", status)
	messages := map[string]string{}
	for _, cs := range status.ContainerStatuses {
		require.NotNil(t, cs.State.Terminated, cs.Name)
		messages[cs.Name] = cs.State.Terminated.Message
	}
	assert.Equal(t, map[string]string{
		"default-path": "DONE",
		"custom-path":  "DONE",
		"from-logs":    "workload cat: open /missing: no such file or directory\n",
	}, messages)
	require.NoError(t, p.DeletePod(ctx, pod))
}

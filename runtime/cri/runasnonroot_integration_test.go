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

// runAsNonRoot through containerd, as the upstream "When creating a container with
// runAsNonRoot" specs: an image of uid 1234 runs, a root image and an image with a user name
// are refused with the kubelet's CreateContainerConfigError.
func TestRunAsNonRootAgainstTheImagesUser(t *testing.T) {
	const nonRootImage, rootImage, namedImage = "localhost/test/nonroot:1", "localhost/test/root:1", "localhost/test/named:1"
	importImage(t, nonRootImage, testimage.Options{Cmd: []string{"exit"}, User: "1234", Marker: "nonroot"})
	importImage(t, rootImage, testimage.Options{Cmd: []string{"exit"}, Marker: "root"})
	importImage(t, namedImage, testimage.Options{Cmd: []string{"exit"}, User: "nginx", Marker: "named"})
	ctx, _, p := runLifecycle(t)
	var err error

	pod := testPod("nonroot", nonRootImage)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	pod.Spec.Containers = []corev1.Container{
		{Name: "nonroot", Image: nonRootImage, ImagePullPolicy: corev1.PullNever},
		{Name: "root", Image: rootImage, ImagePullPolicy: corev1.PullNever},
		{Name: "named", Image: namedImage, ImagePullPolicy: corev1.PullNever},
	}
	require.NoError(t, p.CreatePod(ctx, pod))
	where := `(pod: "nonroot_test(` + string(pod.UID) + `)", container: `
	var status *corev1.PodStatus
	require.Eventually(t, func() bool {
		status, err = p.GetPodStatus(ctx, pod.Namespace, pod.Name)
		if err != nil || len(status.ContainerStatuses) != 3 {
			return false
		}
		ran, root, named := status.ContainerStatuses[0].State.Terminated, status.ContainerStatuses[1].State.Waiting, status.ContainerStatuses[2].State.Waiting
		return ran != nil && root != nil && root.Reason == "CreateContainerConfigError" && named != nil && named.Reason == "CreateContainerConfigError"
	}, 60*time.Second, 50*time.Millisecond, "last status %+v", status)
	assert.Equal(t, int32(0), status.ContainerStatuses[0].State.Terminated.ExitCode, "uid 1234 runs")
	assert.Equal(t, "container has runAsNonRoot and image will run as root "+where+"root)", status.ContainerStatuses[1].State.Waiting.Message)
	assert.Equal(t, "container has runAsNonRoot and image has non-numeric user (nginx), cannot verify user is non-root "+where+"named)",
		status.ContainerStatuses[2].State.Waiting.Message)
	require.NoError(t, p.DeletePod(ctx, pod))
}

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/internal/cgrouptest"
	"github.com/vk-static/vk-static/podutil"
)

// Limits enforced by cgroups, as under the kubelet: a container that reads 200 MB into memory
// under a 48Mi limit is OOM-killed — terminated, reason OOMKilled, exit code 137 — and restarted
// by its restart policy; its pod's cgroup is under kubepods/burstable, and nothing of it is left
// once the pod is removed.
func TestProcessMemoryLimitOOMKilled(t *testing.T) {
	t.Parallel()
	root := cgrouptest.Root(t)
	a := startProcessAgent(t, "--cgroup-root", root)
	pod := staticPod("oom", shell(`echo started; exec dd if=/dev/zero of=/dev/null bs=200M count=1`)...)
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Mi")}}
	a.writePod(pod)

	mirror := a.waitMirror("oom", 60*time.Second, "OOMKilled and restarted", func(p *corev1.Pod) error {
		cs := mainStatus(p)
		if cs == nil || cs.RestartCount < 1 || cs.LastTerminationState.Terminated == nil {
			return fmt.Errorf("main %s", describeStatus(cs))
		}
		if term := cs.LastTerminationState.Terminated; term.Reason != "OOMKilled" || term.ExitCode != 137 {
			return fmt.Errorf("last termination %+v", term)
		}
		return nil
	})
	assert.Equal(t, corev1.PodQOSBurstable, mirror.Status.QOSClass)
	uid := mirror.Annotations[podutil.ConfigMirrorAnnotationKey]
	require.NotEmpty(t, uid)
	podCgroup := root + "/kubepods/burstable/pod" + uid
	assert.True(t, cgrouptest.Exists(podCgroup), "the pod's cgroup %s", podCgroup)
	logs, err := podLogs(context.Background(), mirror.Namespace, mirror.Name, &corev1.PodLogOptions{Container: "main", Previous: true})
	require.NoError(t, err)
	assert.Equal(t, "started", strings.TrimSpace(logs), "dd printed nothing: killed before it ended")

	a.removePod("oom")
	a.mirrorGone("oom")
	a.noContainerProcesses(10 * time.Second)
	require.Eventually(t, func() bool { return !cgrouptest.Exists(podCgroup) }, 20*time.Second, 100*time.Millisecond, "the pod's cgroup is removed with the pod")
}

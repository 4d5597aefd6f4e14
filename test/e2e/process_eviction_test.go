package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// TestProcessEvictionUnderDiskPressure: the agent's --root-dir is a 64 MiB tmpfs and
// nodefs.available<24Mi its only threshold. Of two API pods, one fills its emptyDir past the
// threshold: the Node turns DiskPressure=True, the filling pod is evicted (Failed, reason
// Evicted, the kubelet's message, a Warning Evicted event), the other keeps running, and once
// the evicted pod's emptyDir is removed DiskPressure goes back to False after the pressure
// transition period (10s: long enough that the condition, True from the housekeeping that
// evicts until the transition period after it, is seen; issue 26).
func TestProcessEvictionUnderDiskPressure(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	rootDir := tmpfsDir(t, "64m")
	a := startProcessAgent(t, "--root-dir", rootDir,
		"--eviction-hard", "nodefs.available<24Mi", "--eviction-pressure-transition-period", "10s")
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	ctx := context.Background()

	withScratch := func(name, script string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				NodeName:                      a.Node,
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				// No token volume: its source is under --root-dir, which the emptyDir at /tmp
				// hides from the mounts that follow it.
				AutomountServiceAccountToken: ptr.To(false),
				Volumes:                      []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell(script),
					// The process provider mounts over existing host paths: /tmp.
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/tmp"}}}},
			},
		}
	}
	get := func(name string) (*corev1.Pod, error) { return pods.Get(ctx, name, metav1.GetOptions{}) }
	diskPressure := func(want corev1.ConditionStatus) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
			require.NoError(c, err)
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeDiskPressure {
					assert.Equal(c, want, cond.Status, "%s: %s", cond.Reason, cond.Message)
					return
				}
			}
			c.Errorf("no DiskPressure condition")
		}, 90*time.Second, 200*time.Millisecond, "DiskPressure=%s", want)
	}
	diskPressure(corev1.ConditionFalse)
	// The quiet pod first: under pressure no new pod is admitted.
	_, err := pods.Create(ctx, withScratch("quiet", "echo small > /tmp/small && exec sleep 3600"), metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, "quiet", 30*time.Second, "Running", podwait.MainRunning)
	_, err = pods.Create(ctx, withScratch("filler", "dd if=/dev/zero of=/tmp/fill bs=1M count=48; exec sleep 3600"), metav1.CreateOptions{})
	require.NoError(t, err)

	diskPressure(corev1.ConditionTrue)
	evicted := podwait.Until(t, env.Admin, ns, "filler", 90*time.Second, "Failed/Evicted", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "Evicted" {
			return fmt.Errorf("phase %s reason %q", p.Status.Phase, p.Status.Reason)
		}
		return nil
	})
	assert.True(t, strings.HasPrefix(evicted.Status.Message,
		"The node was low on resource: ephemeral-storage. Threshold quantity: 24Mi, available: "), evicted.Status.Message)
	assert.True(t, hasCondition(evicted, corev1.DisruptionTarget), "DisruptionTarget: %v", evicted.Status.Conditions)
	for _, cs := range evicted.Status.ContainerStatuses {
		assert.NotNil(t, cs.State.Terminated, "container %s stopped", cs.Name)
	}
	waitEvent(t, ns, "filler", "Evicted", "The node was low on resource: ephemeral-storage.", 30*time.Second)
	waitEvent(t, metav1.NamespaceDefault, a.Node, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", 30*time.Second)
	quiet, err := get("quiet")
	require.NoError(t, err)
	assert.NoError(t, podwait.MainRunning(quiet), "the other pod keeps running")

	diskPressure(corev1.ConditionFalse)
	quiet, err = get("quiet")
	require.NoError(t, err)
	assert.NoError(t, podwait.MainRunning(quiet), "the other pod still runs")
	evicted, err = get("filler")
	require.NoError(t, err)
	assert.Equal(t, corev1.PodFailed, evicted.Status.Phase, "an evicted pod is not started again")

	for _, name := range []string{"quiet", "filler"} {
		require.NoError(t, pods.Delete(ctx, name, metav1.DeleteOptions{}))
	}
	for _, name := range []string{"quiet", "filler"} {
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
	}
	a.noContainerProcesses(10 * time.Second)
}

// tmpfsDir is a fresh directory with a tmpfs of size mounted on it, unmounted when the test
// ends (after the agent using it has stopped: cleanups run last first).
func tmpfsDir(t *testing.T, size string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vk-static-e2e-tmpfs-")
	require.NoError(t, err)
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0755", "tmpfs", dir).CombinedOutput()
	require.NoError(t, err, "mount tmpfs: %s", out)
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			// Pods' volumes left mounted below it by a test that failed midway.
			t.Logf("unmounting %s: %v; detaching it", dir, err)
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
		_ = os.Remove(dir)
	})
	return dir
}

package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/provider"
)

// deleteUntilStopped deletes pod and waits for its terminal status.
func (h *harness) deleteUntilStopped(pod *corev1.Pod) {
	h.t.Helper()
	require.NoError(h.t, h.p.DeletePod(context.Background(), pod))
	h.eventually(pod.UID, "terminal", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed || s.Phase == corev1.PodSucceeded })
}

// waitEvent waits for an event whose text contains reason and returns it.
func (h *harness) waitEvent(reason string) string {
	h.t.Helper()
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case e := <-h.events.Events:
			if strings.Contains(e, reason) {
				return e
			}
			seen = append(seen, e)
		case <-time.After(10 * time.Millisecond):
		}
	}
	h.t.Fatalf("no %s event; saw %v", reason, seen)
	return ""
}

func (h *harness) known(pod *corev1.Pod) bool {
	_, err := h.p.GetPod(context.Background(), pod.Namespace, pod.Name)
	return !provider.IsNotFound(err)
}

// A container the runtime cannot remove keeps the pod — terminating, its record in place —
// and the removal is tried again with back-off until the runtime confirms it.
func TestFailedContainerRemovalKeepsThePodAndRetries(t *testing.T) {
	h := newHarness(t)
	pod := testPod("cu1", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.rt.mu.Lock()
	h.rt.removeFailures = 3
	h.rt.mu.Unlock()
	record := filepath.Join(h.root, "pods", string(pod.UID), podFile)

	h.deleteUntilStopped(pod)
	for i, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		e := h.waitEvent(reasonCleanupFailed)
		assert.Contains(t, e, "retrying in "+delay.String(), "attempt %d", i+1)
		assert.True(t, h.known(pod), "the pod is kept while its container is not removed")
		assert.FileExists(t, record)
		list, _ := h.rt.ListContainers(context.Background())
		assert.Len(t, list, 1)
		h.clock.Step(delay)
	}
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten once removed")
	list, _ := h.rt.ListContainers(context.Background())
	assert.Empty(t, list)
	assert.NoDirExists(t, filepath.Dir(record))
	assert.Equal(t, 3.0, testutil.ToFloat64(h.p.metrics.cleanupFailures.WithLabelValues(cleanupStepContainer)))
}

// An agent restarted while a deleted pod could not be cleaned up goes on deleting it: the
// deletion is in the pod's record, and nothing is started again.
func TestRestartedAgentGoesOnDeletingAPodNotCleanedUp(t *testing.T) {
	h := newHarness(t)
	pod := testPod("cu2", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.rt.mu.Lock()
	h.rt.removeFailures = 1
	h.rt.mu.Unlock()
	h.deleteUntilStopped(pod)
	h.waitEvent(reasonCleanupFailed)

	h.stop()
	h.start()
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "deleted by the next agent")
	list, _ := h.rt.ListContainers(context.Background())
	assert.Empty(t, list)
	assert.Equal(t, []string{"start app#0", "stop app#0 grace=12s"}, h.rt.calls(), "not started again")
}

// requireMount skips a test that needs to mount tmpfs (root in the initial user namespace).
func requireMount(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root; running as uid", os.Geteuid())
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mounting tmpfs is not permitted here: %v", err)
	}
	require.NoError(t, syscall.Unmount(dir, 0))
}

// mountHeld mounts a tmpfs at dir holding a file, and unmounts it when the test ends.
func mountHeld(t *testing.T, dir string) (held string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"))
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	held = filepath.Join(dir, "held")
	require.NoError(t, os.WriteFile(held, []byte("not the agent's"), 0o644))
	return held
}

// A mount in a volume that will not detach (busy: a file open in it) fails the volumes'
// teardown; the pod's directory must not be removed through it.
func TestBusyMountInAVolumeKeepsThePodDirectory(t *testing.T) {
	requireMount(t)
	h := newHarness(t)
	pod := testPod("cu3", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	scratch := h.rt.config("app").Mounts[0].HostPath
	require.DirExists(t, scratch)
	held := mountHeld(t, filepath.Join(scratch, "host"))
	busy, err := os.Open(held) // an open file: umount fails with EBUSY
	require.NoError(t, err)
	defer busy.Close()

	h.deleteUntilStopped(pod)
	e := h.waitEvent(reasonCleanupFailed)
	assert.Contains(t, e, "volumes")
	assert.True(t, h.known(pod), "kept")
	assert.FileExists(t, held, "nothing deleted through the mount")
	assert.FileExists(t, filepath.Join(h.root, "pods", string(pod.UID), podFile))

	// Once the mount can go, the next retry tears it down and forgets the pod.
	require.NoError(t, busy.Close())
	h.clock.Step(time.Second)
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten")
	assert.NoDirExists(t, filepath.Join(h.root, "pods", string(pod.UID)))
}

// A mount below the pod's directory that the volumes' teardown did not make (the runtime's, an
// operator's) keeps the directory and the pod until it is gone.
func TestForeignMountBelowThePodDirectoryKeepsIt(t *testing.T) {
	requireMount(t)
	h := newHarness(t)
	pod := testPod("cu4", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	dir := filepath.Join(h.root, "pods", string(pod.UID), "elsewhere")
	held := mountHeld(t, dir)

	h.deleteUntilStopped(pod)
	e := h.waitEvent(reasonCleanupFailed)
	assert.Contains(t, e, "directory")
	assert.Contains(t, e, "still mounted")
	assert.True(t, h.known(pod), "kept")
	assert.FileExists(t, held, "nothing deleted through the mount")

	reg := prometheus.NewRegistry()
	newMetrics().register(reg, h.p)
	n, err := testutil.GatherAndCount(reg, "vk_static_pods_not_cleaned_up")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, 1.0, gaugeValue(t, reg, "vk_static_pods_not_cleaned_up"))

	require.NoError(t, syscall.Unmount(dir, 0))
	h.clock.Step(time.Second)
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten")
	assert.NoDirExists(t, filepath.Join(h.root, "pods", string(pod.UID)))
	assert.Equal(t, 0.0, gaugeValue(t, reg, "vk_static_pods_not_cleaned_up"))
}

// gaugeValue is the value of the unlabelled gauge name in reg.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// A subPath is mounted from a mount point of the pod's own (volume-subpaths), which goes with
// the pod, after an agent restart too: nothing stays mounted below the pod's directory, and the
// directory is removed.
func TestSubPathMountsGoWithThePod(t *testing.T) {
	requireMount(t)
	h := newHarness(t)
	pod := testPod("cu5", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	pod.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/data", SubPath: "data"}}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	podDir := filepath.Join(h.root, "pods", string(pod.UID))
	target := filepath.Join(podDir, "volume-subpaths", "scratch", "app", "0")
	assert.Equal(t, target, h.rt.config("app").Mounts[0].HostPath)
	points, err := mounts.Under(podDir)
	require.NoError(t, err)
	assert.Equal(t, []string{target}, points)

	h.stop()
	h.start()
	h.deleteUntilStopped(pod)
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten")
	assert.NoDirExists(t, podDir)
	points, err = mounts.Under(h.root)
	require.NoError(t, err)
	assert.Empty(t, points)
}

// An old container instance whose removal fails is not forgotten: the pod's syncs remove it
// once the runtime can.
func TestOldInstanceNotRemovedIsTriedAgain(t *testing.T) {
	h := newHarness(t)
	pod := testPod("lo1", corev1.RestartPolicyAlways, ctr("crash", "false"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.rt.exit(h.rt.running("crash"), 1)
	h.eventually(pod.UID, "restarted once", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 1 && mainState(s, 0).Running != nil
	})
	count := func() int {
		list, err := h.rt.ListContainers(context.Background())
		require.NoError(t, err)
		return len(list)
	}
	require.Equal(t, 2, count())

	// The third instance replaces the first, which the runtime cannot remove for now.
	h.rt.mu.Lock()
	h.rt.removeFailures = 1 << 20
	h.rt.mu.Unlock()
	h.rt.exit(h.rt.running("crash"), 2)
	h.eventually(pod.UID, "in CrashLoopBackOff", func(s *corev1.PodStatus) bool { return s.ContainerStatuses[0].State.Waiting != nil })
	h.step(10 * time.Second)
	h.eventually(pod.UID, "restarted twice", func(s *corev1.PodStatus) bool {
		return s.ContainerStatuses[0].RestartCount == 2 && mainState(s, 0).Running != nil
	})
	h.rt.mu.Lock()
	calls := h.rt.removeCalls
	h.rt.removeFailures = 0
	h.rt.mu.Unlock()
	require.Positive(t, calls)
	assert.Equal(t, 3, count(), "the first instance is still there")

	// The retry the pod's worker set removes it (the clock moves on until it comes).
	require.Eventually(t, func() bool {
		h.clock.Step(time.Second)
		return count() == 2
	}, 10*time.Second, 10*time.Millisecond, "the old instance removed")

	h.deleteUntilStopped(pod)
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten")
	assert.Equal(t, 0, count())
}

// A sandbox made and then given up (its addresses unknown) whose removal fails is not
// forgotten either: the next try removes it before making another.
func TestGivenUpSandboxNotRemovedIsTriedAgain(t *testing.T) {
	h := newHarness(t)
	h.rt.mu.Lock()
	h.rt.podIP = "10.1.0.5"
	h.rt.listSandboxFailures, h.rt.removeSandboxFailures = 1, 1
	h.rt.mu.Unlock()
	sandboxes := func() int {
		h.rt.mu.Lock()
		defer h.rt.mu.Unlock()
		return len(h.rt.sandboxes)
	}
	pod := testPod("lo2", corev1.RestartPolicyAlways, ctr("app", "sleep"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.waitEvent("FailedCreatePodSandBox")
	assert.Equal(t, 1, sandboxes(), "the sandbox given up is still there")

	// The clock moves on until the retry comes (its timer is set after the event).
	require.Eventually(t, func() bool {
		h.clock.Step(time.Second)
		s := h.status(pod.UID)
		return s != nil && len(s.ContainerStatuses) == 1 && mainState(s, 0).Running != nil
	}, 10*time.Second, 10*time.Millisecond, "running after the retry")
	assert.Equal(t, 1, sandboxes(), "the one given up removed, one made")
	assert.Equal(t, "10.1.0.5", h.status(pod.UID).PodIP)
}

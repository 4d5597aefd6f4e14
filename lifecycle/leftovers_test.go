package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

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

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

	// The retry the pod's worker set removes it.
	h.step(retryAfter)
	require.Eventually(t, func() bool { return count() == 2 }, 10*time.Second, 5*time.Millisecond, "the old instance removed")

	h.deleteUntilStopped(pod)
	require.Eventually(t, func() bool { return !h.known(pod) }, 10*time.Second, 5*time.Millisecond, "forgotten")
	assert.Equal(t, 0, count())
}

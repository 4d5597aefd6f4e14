package probe

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// managerHarness runs a Manager's workers on their goroutines, on a fake clock.
type managerHarness struct {
	clk     *clocktesting.FakeClock
	m       *Manager
	fc      *fakeContainer
	updates chan Update
	t0      time.Time
}

// newManagerHarness makes a Manager whose start-up jitter is jitter.
func newManagerHarness(t *testing.T, scripts map[string][]int, jitter time.Duration) *managerHarness {
	h := &managerHarness{clk: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)), updates: make(chan Update, 100)}
	h.t0 = h.clk.Now()
	h.fc = newFakeContainer(h.clk, scripts)
	h.m = NewManager(h.clk, func(u Update) { h.updates <- u })
	h.m.jitter = func(time.Duration) time.Duration { return jitter }
	t.Cleanup(h.m.Close)
	return h
}

func (h *managerHarness) add(ctx context.Context, c *corev1.Container) {
	h.m.Add(ctx, podUID, c, instanceID, h.clk.Now(), Target{Exec: h.fc.exec})
}

func (h *managerHarness) worker(t *testing.T, k Kind) *worker {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	inst, ok := h.m.instances[instanceKey{pod: podUID, container: "app", instance: instanceID}]
	require.True(t, ok)
	return inst.workers[k]
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

func TestManagerProbesAtOnceThenEveryPeriod(t *testing.T) {
	h := newManagerHarness(t, map[string][]int{"live": {0, 1, 1}}, 0)
	h.add(t.Context(), &corev1.Container{Name: "app", LivenessProbe: probeSpec("live", 10, 0, 1, 2)})
	w := h.worker(t, Liveness)

	assert.Equal(t, h.t0, h.fc.next(t).at, "the first probe at once")
	h.clk.Step(10 * time.Second)
	assert.Equal(t, h.t0.Add(10*time.Second), h.fc.next(t).at)
	h.clk.Step(10 * time.Second)
	assert.Equal(t, h.t0.Add(20*time.Second), h.fc.next(t).at)
	assert.Equal(t, update(Liveness, Failure, "live exit 1"), receive(t, h.updates))
	waitClosed(t, w.done, "the liveness worker's end after its failure")
}

func TestManagerJitterAfterItsStart(t *testing.T) {
	h := newManagerHarness(t, map[string][]int{"ready": {0}}, 3*time.Second)
	h.add(t.Context(), &corev1.Container{Name: "app", ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)})
	require.Eventually(t, h.clk.HasWaiters, 10*time.Second, time.Millisecond, "the worker waits on the clock")
	h.clk.Step(3 * time.Second)
	assert.Equal(t, h.t0.Add(3*time.Second), h.fc.next(t).at, "the first probe after the jitter")
	assert.Equal(t, update(Readiness, Success, "ready exit 0"), receive(t, h.updates))
	h.clk.Step(10 * time.Second)
	assert.Equal(t, h.t0.Add(13*time.Second), h.fc.next(t).at, "then every period")
}

func TestManagerNoJitterOncePastAPeriod(t *testing.T) {
	h := newManagerHarness(t, map[string][]int{"ready": {0}}, 0)
	h.m.jitter = func(time.Duration) time.Duration {
		t.Error("jitter asked for a worker added a period after the Manager's start")
		return 0
	}
	h.clk.Step(10 * time.Second)
	h.add(t.Context(), &corev1.Container{Name: "app", ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)})
	assert.Equal(t, h.t0.Add(10*time.Second), h.fc.next(t).at)
}

func TestManagerReadinessRightAfterStartup(t *testing.T) {
	h := newManagerHarness(t, map[string][]int{"startup": {0}, "ready": {0}}, 0)
	h.add(t.Context(), &corev1.Container{Name: "app", StartupProbe: probeSpec("startup", 10, 0, 1, 3), ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)})
	got := map[string]time.Time{}
	for range 2 {
		c := h.fc.next(t)
		got[c.cmd] = c.at
	}
	assert.Equal(t, map[string]time.Time{"startup": h.t0, "ready": h.t0}, got, "readiness does not wait a period once started")
}

func TestManagerWorkersEnd(t *testing.T) {
	c := &corev1.Container{Name: "app", LivenessProbe: probeSpec("live", 10, 0, 1, 3), ReadinessProbe: probeSpec("ready", 10, 0, 1, 3)}
	scripts := map[string][]int{"live": {0}, "ready": {0}}

	t.Run("context", func(t *testing.T) {
		h := newManagerHarness(t, scripts, 0)
		ctx, cancel := context.WithCancel(t.Context())
		h.add(ctx, c)
		live, ready := h.worker(t, Liveness), h.worker(t, Readiness)
		cancel()
		waitClosed(t, live.done, "the liveness worker's end")
		waitClosed(t, ready.done, "the readiness worker's end")
	})
	t.Run("RemoveInstance", func(t *testing.T) {
		h := newManagerHarness(t, scripts, 0)
		h.add(t.Context(), c)
		live, ready := h.worker(t, Liveness), h.worker(t, Readiness)
		h.m.RemoveInstance(podUID, "app", instanceID)
		waitClosed(t, live.done, "the liveness worker's end")
		waitClosed(t, ready.done, "the readiness worker's end")
	})
	t.Run("StopLivenessAndStartup", func(t *testing.T) {
		h := newManagerHarness(t, scripts, 0)
		h.add(t.Context(), c)
		live, ready := h.worker(t, Liveness), h.worker(t, Readiness)
		h.m.StopLivenessAndStartup(podUID)
		waitClosed(t, live.done, "the liveness worker's end")
		select {
		case <-ready.done:
			t.Fatal("the readiness worker ended with liveness")
		default:
		}
	})
	t.Run("Close", func(t *testing.T) {
		h := newManagerHarness(t, scripts, time.Hour) // workers wait out the jitter
		h.add(t.Context(), c)
		live, ready := h.worker(t, Liveness), h.worker(t, Readiness)
		h.m.Close()
		for _, w := range []*worker{live, ready} {
			select {
			case <-w.done:
			default:
				t.Fatal("Close returned before its workers ended")
			}
		}
		h.add(t.Context(), c)
		h.m.mu.Lock()
		assert.Empty(t, h.m.instances, "Add does nothing after Close")
		h.m.mu.Unlock()
	})
}

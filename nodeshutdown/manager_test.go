package nodeshutdown

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/test/support/fakelogind"
)

// stops records StopPod's calls.
type stops struct {
	mu     sync.Mutex
	events []string
	held   map[string]bool // whether the inhibitor lock was held when the pod's stop ended
	l      *fakelogind.Logind
	block  map[string]bool // stops that wait for their context to end
}

func (s *stops) stop(ctx context.Context, pod *corev1.Pod, grace time.Duration, reason, message string) error {
	s.mu.Lock()
	s.events = append(s.events, fmt.Sprintf("start %s %s %s %q", pod.Name, grace, reason, message))
	s.mu.Unlock()
	if s.block[pod.Name] {
		<-ctx.Done()
	} else {
		time.Sleep(50 * time.Millisecond) // a band's stops overlap: they run together
	}
	held := s.l.Held()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, "end "+pod.Name)
	s.held[pod.Name] = held
	return ctx.Err()
}

func (s *stops) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// The kubelet's manager on logind: the delay lock taken at start; on PrepareForShutdown(true)
// the node says it shuts down, the non-critical pods are stopped with shutdownGracePeriod less
// the critical pods' part (or their own, shorter), then the critical ones (a static pod among
// them) with shutdownGracePeriodCriticalPods, each with the kubelet's reason and message, and
// only then is the lock released; a cancellation takes it again; stopping the agent releases it.
func TestManagerStopsPodsOnShutdown(t *testing.T) {
	l := fakelogind.Start(t, 30*time.Second)
	static := pod("static", nil, ptr.To[int64](30))
	static.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: "file"}
	pods := []*corev1.Pod{
		pod("critical", ptr.To[int32](2000001000), ptr.To[int64](30)), static,
		pod("web", ptr.To[int32](0), ptr.To[int64](30)), pod("quick", nil, ptr.To[int64](5)),
	}
	s := &stops{l: l, held: map[string]bool{}}
	var statusMu sync.Mutex
	var statuses []error
	var m *Manager
	m = NewManager(Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second, BusAddress: l.Address(),
		ActivePods: func() []*corev1.Pod { return pods }, StopPod: s.stop,
		NodeStatusChanged: func(context.Context) {
			statusMu.Lock()
			defer statusMu.Unlock()
			statuses = append(statuses, m.ShutdownStatus())
		}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	require.Eventually(t, l.Held, 10*time.Second, 10*time.Millisecond, "the inhibitor lock is taken at start")
	assert.Equal(t, []fakelogind.Inhibit{{What: "shutdown", Who: "vk-static", Why: "vk-static stops the node's pods gracefully", Mode: "delay"}}, l.Calls())
	assert.NoError(t, m.ShutdownStatus())
	assert.Empty(t, s.get(), "nothing is stopped before the shutdown")

	require.NoError(t, l.PrepareForShutdown(true))
	require.Eventually(t, func() bool { return !l.Held() }, 10*time.Second, 10*time.Millisecond, "the lock is released once the pods have stopped")
	assert.ErrorIs(t, m.ShutdownStatus(), ErrShuttingDown)
	assert.EqualError(t, m.ShutdownStatus(), "node is shutting down")
	statusMu.Lock()
	assert.Equal(t, []error{ErrShuttingDown}, statuses, "the Node is told at once")
	statusMu.Unlock()

	events := s.get()
	require.Len(t, events, 8)
	msg := `"Pod was terminated in response to imminent node shutdown."`
	assert.ElementsMatch(t, []string{"start web 20s Terminated " + msg, "start quick 5s Terminated " + msg}, events[:2], "non-critical pods first, together")
	assert.ElementsMatch(t, []string{"end web", "end quick"}, events[2:4])
	assert.ElementsMatch(t, []string{"start critical 10s Terminated " + msg, "start static 10s Terminated " + msg}, events[4:6], "then the critical ones, a static pod among them")
	assert.ElementsMatch(t, []string{"end critical", "end static"}, events[6:8])
	s.mu.Lock()
	assert.Equal(t, map[string]bool{"web": true, "quick": true, "critical": true, "static": true}, s.held, "the lock is held until every pod has stopped")
	s.mu.Unlock()

	require.NoError(t, l.PrepareForShutdown(false))
	require.Eventually(t, l.Held, 10*time.Second, 10*time.Millisecond, "a cancelled shutdown takes the lock again")
	assert.Len(t, l.Calls(), 2)
	assert.NoError(t, m.ShutdownStatus())

	cancel()
	<-done
	assert.False(t, l.Held(), "a stopped agent holds nothing back")
	assert.Equal(t, []string{"inhibit", "released", "inhibit", "released"}, l.Events())
}

// A band gets no longer than its grace period: a pod that does not stop in time does not hold
// the next band back, nor the shutdown.
func TestManagerBandTimesOut(t *testing.T) {
	l := fakelogind.Start(t, 30*time.Second)
	pods := []*corev1.Pod{pod("stuck", ptr.To[int32](0), ptr.To[int64](30)), pod("system", ptr.To[int32](1000), ptr.To[int64](30))}
	s := &stops{l: l, held: map[string]bool{}, block: map[string]bool{"stuck": true}}
	m := NewManager(Config{ByPodPriority: []PriorityGracePeriod{{0, 1}, {1000, 2}}, BusAddress: l.Address(),
		ActivePods: func() []*corev1.Pod { return pods }, StopPod: s.stop})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, l.Held, 10*time.Second, 10*time.Millisecond)

	start := time.Now()
	require.NoError(t, l.PrepareForShutdown(true))
	require.Eventually(t, func() bool { return !l.Held() }, 10*time.Second, 10*time.Millisecond)
	elapsed := time.Since(start)
	assert.GreaterOrEqual(t, elapsed, time.Second, "the first band is waited for its grace period")
	assert.Less(t, elapsed, 3*time.Second, "and no longer")
	events := s.get()
	require.Len(t, events, 4)
	assert.Equal(t, `start stuck 1s Terminated "Pod was terminated in response to imminent node shutdown."`, events[0])
	// The stuck pod's stop is left to the provider (its wait ends with the band's) as the next
	// band starts.
	assert.ElementsMatch(t, []string{"end stuck", `start system 2s Terminated "Pod was terminated in response to imminent node shutdown."`}, events[1:3])
	assert.Equal(t, "end system", events[3])
}

package lifecycle

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/nodeshutdown"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/test/support/fakelogind"
)

// execRecordingRuntime is the healthy fake runtime recording the commands run in containers
// (the preStop hooks), in the order of its calls.
type execRecordingRuntime struct{ *healthyRuntime }

func (r *execRecordingRuntime) Exec(ctx context.Context, id string, cmd []string, io provider.AttachIO) error {
	f := r.fakeRuntime
	f.mu.Lock()
	name := ""
	if c, ok := f.containers[id]; ok {
		name = c.cfg.Name
	}
	f.record("exec %s %s", name, strings.Join(cmd, " "))
	f.mu.Unlock()
	return f.Exec(ctx, id, cmd, io)
}

// TestNodeShutdownStopsPodsByPriority: with shutdownGracePeriod 30s and
// shutdownGracePeriodCriticalPods 10s the provider takes logind's delay lock when it runs; at
// PrepareForShutdown(true) the Node turns NotReady ("node is shutting down"), the API pods are
// stopped first (preStop, then the stop, with 20s or their own shorter grace), then the static
// pod with 10s, each left Failed with the kubelet's reason, message and DisruptionTarget
// condition, and only then is the lock released; a new pod is refused meanwhile. An agent that
// starts again runs the static pod again and leaves the API pods Failed.
func TestNodeShutdownStopsPodsByPriority(t *testing.T) {
	l := fakelogind.Start(t, 30*time.Second)
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = &execRecordingRuntime{&healthyRuntime{fakeRuntime: h.rt, ready: true}}
	h.configure = func(cfg *Config) {
		cfg.Shutdown = &nodeshutdown.Config{GracePeriod: 30 * time.Second, GracePeriodCriticalPods: 10 * time.Second, BusAddress: l.Address()}
		cfg.NodeName = "node-a"
	}
	h.start()
	var mu sync.Mutex
	var ready []corev1.NodeCondition
	h.p.NotifyNodeStatus(context.Background(), func(n *corev1.Node) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = append(ready, c)
			}
		}
	})
	lastReady := func() corev1.NodeCondition {
		mu.Lock()
		defer mu.Unlock()
		if len(ready) == 0 {
			return corev1.NodeCondition{}
		}
		return ready[len(ready)-1]
	}
	ctx := context.Background()

	web := testPod("web", corev1.RestartPolicyAlways, ctr("web", "serve"))
	web.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	web.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"drain"}}}}
	quick := testPod("quick", corev1.RestartPolicyAlways, ctr("quick", "serve"))
	quick.Spec.TerminationGracePeriodSeconds = ptr.To[int64](5)
	static := testPod("static", corev1.RestartPolicyAlways, ctr("static", "serve"))
	static.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
	static.Annotations = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}
	for _, pod := range []*corev1.Pod{web, quick, static} {
		require.NoError(t, h.p.CreatePod(ctx, pod))
		h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return len(s.ContainerStatuses) == 1 && mainState(s, 0).Running != nil })
	}
	require.Eventually(t, l.Held, 10*time.Second, 5*time.Millisecond, "the inhibitor lock is taken when the provider runs")
	require.Eventually(t, func() bool { return lastReady().Status == corev1.ConditionTrue }, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, l.PrepareForShutdown(true))
	require.Eventually(t, func() bool { return !l.Held() }, 10*time.Second, 5*time.Millisecond, "the lock is released once the pods have stopped")
	for _, pod := range []*corev1.Pod{web, quick, static} {
		h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
		s := h.status(pod.UID)
		assert.Equal(t, "Terminated", s.Reason, pod.Name)
		assert.Equal(t, "Pod was terminated in response to imminent node shutdown.", s.Message, pod.Name)
		c, ok := podstatus.Find(s.Conditions, corev1.DisruptionTarget)
		if assert.True(t, ok, pod.Name) {
			assert.Equal(t, corev1.ConditionTrue, c.Status)
			assert.Equal(t, "TerminationByKubelet", c.Reason)
			assert.Equal(t, "Pod was terminated in response to imminent node shutdown.", c.Message)
		}
	}
	var stops []string
	for _, c := range h.rt.calls() {
		if strings.HasPrefix(c, "stop ") || strings.HasPrefix(c, "exec ") {
			stops = append(stops, c)
		}
	}
	require.Len(t, stops, 4, "%v", stops)
	assert.ElementsMatch(t, []string{"exec web drain", "stop web#0 grace=20s", "stop quick#0 grace=5s"}, stops[:3],
		"the API pods first, together, with shutdownGracePeriod less the critical pods' part or their own shorter grace")
	assert.Less(t, slices.Index(stops, "exec web drain"), slices.Index(stops, "stop web#0 grace=20s"), "the preStop hook before the stop")
	assert.Equal(t, "stop static#0 grace=10s", stops[3], "then the static pod, a critical one, with shutdownGracePeriodCriticalPods")
	assert.Equal(t, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady", Message: "node is shutting down"}, lastReady())
	assert.Contains(t, h.drainEvents(), "Normal NodeShutdown Shutdown manager detected shutdown event")

	late := testPod("late", corev1.RestartPolicyAlways, ctr("late", "serve"))
	require.NoError(t, h.p.CreatePod(ctx, late))
	h.eventually(late.UID, "refused", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	assert.Equal(t, "NodeShutdown", h.status(late.UID).Reason)
	assert.Equal(t, "Pod was rejected: Pod was rejected as the node is shutting down.", h.status(late.UID).Message)

	// The host comes back: the static pod runs again, the API pods stay as they were left.
	h.stop()
	h.start()
	require.NoError(t, h.p.CreatePod(ctx, static))
	h.eventually(static.UID, "running again", func(s *corev1.PodStatus) bool {
		return s.Phase == corev1.PodRunning && mainState(s, 0).Running != nil
	})
	for _, pod := range []*corev1.Pod{web, quick} {
		require.NoError(t, h.p.CreatePod(ctx, pod))
		got, err := h.p.GetPodStatus(ctx, pod.Namespace, pod.Name)
		require.NoError(t, err)
		assert.Equal(t, corev1.PodFailed, got.Phase, pod.Name)
		assert.Equal(t, "Terminated", got.Reason, pod.Name)
	}
}

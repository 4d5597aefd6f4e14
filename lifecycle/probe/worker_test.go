package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

const (
	podUID     = types.UID("pod-1")
	instanceID = "c-1"
)

// workerHarness holds one instance's workers without their goroutines: a test calls doProbe
// itself, so what a probe did is known when the call returns.
type workerHarness struct {
	t       *testing.T
	clk     *clocktesting.FakeClock
	m       *Manager
	fc      *fakeContainer
	workers map[Kind]*worker
	ctxs    map[Kind]context.Context
	updates []Update
	events  []Event
}

func newWorkerHarness(t *testing.T, c *corev1.Container, scripts map[string][]int) *workerHarness {
	h := &workerHarness{t: t, clk: clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0)), workers: map[Kind]*worker{}, ctxs: map[Kind]context.Context{}}
	h.fc = newFakeContainer(h.clk, scripts)
	h.m = NewManager(h.clk, func(u Update) { h.updates = append(h.updates, u) }, WithEvents(func(e Event) { h.events = append(h.events, e) }))
	h.m.spawn = func(ctx context.Context, w *worker) {
		h.workers[w.kind] = w
		h.ctxs[w.kind] = ctx
	}
	h.m.Add(t.Context(), podUID, c, instanceID, h.clk.Now(), Target{Host: "127.0.0.1", Exec: h.fc.exec})
	return h
}

// probe runs kind's worker once and returns whether it keeps going.
func (h *workerHarness) probe(k Kind) bool {
	h.t.Helper()
	w, ok := h.workers[k]
	require.True(h.t, ok, "no %s worker", k)
	return w.doProbe(h.ctxs[k])
}

func (h *workerHarness) result(k Kind) Result { return h.m.Result(podUID, "app", instanceID, k) }

func (h *workerHarness) takeUpdates() []Update {
	u := h.updates
	h.updates = nil
	return u
}

func update(k Kind, r Result, msg string) Update {
	return Update{PodUID: podUID, Container: "app", Instance: instanceID, Kind: k, Result: r, Message: msg}
}

func TestWorkerLivenessFailsAtTheThresholdAndStops(t *testing.T) {
	c := &corev1.Container{Name: "app", LivenessProbe: probeSpec("live", 0, 0, 0, 0)} // defaults: 3 failures
	h := newWorkerHarness(t, c, map[string][]int{"live": {1, 1, 0, 1, 1, 1}})
	assert.Equal(t, Success, h.result(Liveness), "alive until the probe says otherwise")

	for range 2 {
		require.True(t, h.probe(Liveness))
	}
	require.True(t, h.probe(Liveness), "a pass starts the count over")
	for range 2 {
		require.True(t, h.probe(Liveness))
	}
	assert.Empty(t, h.takeUpdates())
	require.False(t, h.probe(Liveness), "a liveness failure ends the worker: the instance is restarted")
	assert.Equal(t, []Update{update(Liveness, Failure, "live exit 1")}, h.takeUpdates())
	assert.Equal(t, Failure, h.result(Liveness))
	require.Len(t, h.events, 5, "every failed attempt is an event")
	assert.Equal(t, Event{PodUID: podUID, Container: "app", Instance: instanceID, Kind: Liveness, Reason: ReasonUnhealthy, Message: "Liveness probe failed: live exit 1"}, h.events[0])
}

func TestWorkerReadinessThresholds(t *testing.T) {
	c := &corev1.Container{Name: "app", ReadinessProbe: probeSpec("ready", 5, 0, 2, 1)}
	h := newWorkerHarness(t, c, map[string][]int{"ready": {0, 0, 0, 1, 0, 0}})
	assert.Equal(t, Failure, h.result(Readiness), "not ready before the first verdict")
	assert.True(t, h.m.Started(podUID, "app", instanceID))
	assert.False(t, h.m.Ready(podUID, "app", instanceID))

	steps := []struct {
		want  []Update
		ready bool
	}{
		{nil, false},
		{[]Update{update(Readiness, Success, "ready exit 0")}, true},
		{nil, true}, // still Success: no change to report
		{[]Update{update(Readiness, Failure, "ready exit 1")}, false},
		{nil, false},
		{[]Update{update(Readiness, Success, "ready exit 0")}, true},
	}
	for i, s := range steps {
		require.True(t, h.probe(Readiness), "readiness never stops on its own")
		assert.Equal(t, s.want, h.takeUpdates(), "probe %d", i+1)
		assert.Equal(t, s.ready, h.m.Ready(podUID, "app", instanceID), "probe %d", i+1)
	}
}

func TestWorkerStartupGatesLivenessAndReadiness(t *testing.T) {
	c := &corev1.Container{
		Name:           "app",
		StartupProbe:   probeSpec("startup", 1, 0, 1, 5),
		LivenessProbe:  probeSpec("live", 10, 0, 1, 1),
		ReadinessProbe: probeSpec("ready", 10, 0, 1, 1),
	}
	h := newWorkerHarness(t, c, map[string][]int{"startup": {1, 0}, "live": {0}, "ready": {0}})
	assert.Equal(t, Unknown, h.result(Startup))
	assert.False(t, h.m.Started(podUID, "app", instanceID))

	require.True(t, h.probe(Liveness))
	require.True(t, h.probe(Readiness))
	assert.Empty(t, h.fc.drained(), "nothing but the startup probe runs before it passes")

	require.True(t, h.probe(Startup))
	require.True(t, h.probe(Liveness))
	assert.Equal(t, []string{"startup"}, h.fc.drained())

	require.False(t, h.probe(Startup), "a passed startup probe is done")
	assert.Equal(t, []Update{update(Startup, Success, "startup exit 0")}, h.takeUpdates())
	assert.True(t, h.m.Started(podUID, "app", instanceID))
	assert.False(t, h.m.Ready(podUID, "app", instanceID), "started, not yet ready")
	assert.Len(t, h.workers[Readiness].asks.Ready(), 1, "readiness is asked to probe now")

	require.True(t, h.probe(Readiness))
	require.True(t, h.probe(Liveness))
	assert.Equal(t, []string{"startup", "ready", "live"}, h.fc.drained())
	assert.True(t, h.m.Ready(podUID, "app", instanceID))
}

// The startup Update reaches the caller before readiness is asked to probe: a caller that keeps
// its own started flag (the lifecycle's) has it set before the readiness Update can come, and
// does not take that readiness for a container not yet started.
func TestWorkerStartupUpdateBeforeReadinessTrigger(t *testing.T) {
	c := &corev1.Container{Name: "app", StartupProbe: probeSpec("startup", 1, 0, 1, 5), ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)}
	h := newWorkerHarness(t, c, map[string][]int{"startup": {0}, "ready": {0}})
	triggeredAtUpdate := -1
	h.m.onChange = func(u Update) {
		if u.Kind == Startup {
			triggeredAtUpdate = len(h.workers[Readiness].asks.Ready())
		}
	}
	require.False(t, h.probe(Startup))
	assert.Equal(t, 0, triggeredAtUpdate, "readiness not yet triggered when the startup Update is delivered")
	assert.Len(t, h.workers[Readiness].asks.Ready(), 1, "and triggered after it")
}

func TestWorkerStartupFailure(t *testing.T) {
	c := &corev1.Container{Name: "app", StartupProbe: probeSpec("startup", 1, 0, 1, 2), LivenessProbe: probeSpec("live", 10, 0, 1, 1)}
	h := newWorkerHarness(t, c, map[string][]int{"startup": {1}, "live": {0}})
	require.True(t, h.probe(Startup))
	require.False(t, h.probe(Startup), "a failed startup probe is done: the instance is restarted")
	assert.Equal(t, []Update{update(Startup, Failure, "startup exit 1")}, h.takeUpdates())
	require.True(t, h.probe(Liveness))
	assert.Equal(t, []string{"startup", "startup"}, h.fc.drained(), "liveness never ran")
	assert.False(t, h.m.Ready(podUID, "app", instanceID))
}

func TestWorkerInitialDelay(t *testing.T) {
	c := &corev1.Container{Name: "app", LivenessProbe: probeSpec("live", 10, 25, 1, 1)}
	h := newWorkerHarness(t, c, map[string][]int{"live": {0}})
	require.True(t, h.probe(Liveness))
	h.clk.Step(25*time.Second - time.Millisecond)
	require.True(t, h.probe(Liveness))
	assert.Empty(t, h.fc.drained(), "24.999s is 24 whole seconds, as the kubelet counts")
	h.clk.Step(time.Millisecond)
	require.True(t, h.probe(Liveness))
	assert.Equal(t, []string{"live"}, h.fc.drained())
}

func TestWorkerErrorsAreReportedNotCounted(t *testing.T) {
	c := &corev1.Container{Name: "app", LivenessProbe: probeSpec("missing", 10, 0, 1, 1)}
	h := newWorkerHarness(t, c, map[string][]int{}) // every exec errors: no script
	attempts := 0
	exec := h.workers[Liveness].target.Exec
	h.workers[Liveness].target.Exec = func(ctx context.Context, cmd []string) ([]byte, int, error) {
		attempts++
		return exec(ctx, cmd)
	}
	for range 3 {
		require.True(t, h.probe(Liveness))
	}
	assert.Equal(t, 9, attempts, "three attempts a period")
	assert.Empty(t, h.takeUpdates())
	assert.Equal(t, Success, h.result(Liveness), "an error is no verdict, even at failureThreshold 1")
	require.Len(t, h.events, 3)
	assert.Equal(t, ReasonUnhealthy, h.events[0].Reason)
	assert.Equal(t, `Liveness probe errored and resulted in unknown state: exec probe "missing": no script for "missing"`, h.events[0].Message)
}

// A gRPC liveness probe whose service is not SERVING is a failure like any other: at its
// threshold the instance is to be restarted (the upstream "should be restarted with a GRPC
// liveness probe").
func TestWorkerGRPCLivenessFailure(t *testing.T) {
	live := grpcSpec(healthServer(t), ptr.To("down"))
	live.FailureThreshold = 2
	c := &corev1.Container{Name: "app", LivenessProbe: live}
	h := newWorkerHarness(t, c, nil)
	require.True(t, h.probe(Liveness))
	assert.Empty(t, h.takeUpdates(), "one failure, below the threshold")
	require.False(t, h.probe(Liveness), "the worker ends at the liveness failure")
	assert.Equal(t, []Update{update(Liveness, Failure, `service unhealthy (responded with "NOT_SERVING")`)}, h.takeUpdates())
	require.Len(t, h.events, 2)
	assert.Equal(t, Event{PodUID: podUID, Container: "app", Instance: instanceID, Kind: Liveness, Reason: ReasonUnhealthy,
		Message: `Liveness probe failed: service unhealthy (responded with "NOT_SERVING")`}, h.events[1])
}

func TestWorkerWarningPassesWithAnEvent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	}))
	defer srv.Close()
	_, port := serverTarget(t, srv)
	c := &corev1.Container{Name: "app", ReadinessProbe: httpProbeSpec("/", port)}
	h := newWorkerHarness(t, c, nil)
	require.True(t, h.probe(Readiness))
	assert.Equal(t, Success, h.result(Readiness))
	require.Len(t, h.events, 1)
	assert.Equal(t, ReasonProbeWarning, h.events[0].Reason)
	assert.True(t, strings.HasPrefix(h.events[0].Message, "Readiness probe warning: Probe terminated redirects"), h.events[0].Message)
}

func TestWorkerRemovedInstance(t *testing.T) {
	c := &corev1.Container{Name: "app", ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)}
	h := newWorkerHarness(t, c, map[string][]int{"ready": {0}})
	h.m.RemoveInstance(podUID, "app", instanceID)
	require.False(t, h.probe(Readiness), "its context ended")
	assert.Empty(t, h.fc.drained())
	assert.Equal(t, Unknown, h.result(Readiness))
	assert.False(t, h.m.Started(podUID, "app", instanceID))

	// A probe that finished after the removal reports nothing.
	h.workers[Readiness].m.record(h.workers[Readiness], Success, "")
	assert.Empty(t, h.takeUpdates())
}

func TestWorkerStopLivenessAndStartupKeepsReadiness(t *testing.T) {
	c := &corev1.Container{Name: "app", LivenessProbe: probeSpec("live", 10, 0, 1, 1), ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)}
	h := newWorkerHarness(t, c, map[string][]int{"live": {1}, "ready": {0, 1}})
	require.True(t, h.probe(Readiness))
	h.m.StopLivenessAndStartup(podUID)
	require.False(t, h.probe(Liveness))
	require.True(t, h.probe(Readiness))
	assert.Equal(t, []string{"ready", "ready"}, h.fc.drained())
	assert.Equal(t, []Update{update(Readiness, Success, "ready exit 0"), update(Readiness, Failure, "ready exit 1")}, h.takeUpdates())
	assert.Equal(t, Success, h.result(Liveness), "a pod being killed is not restarted")
}

func TestManagerAddIsIdempotent(t *testing.T) {
	c := &corev1.Container{Name: "app", LivenessProbe: probeSpec("live", 10, 0, 1, 1), ReadinessProbe: probeSpec("ready", 10, 0, 1, 1)}
	h := newWorkerHarness(t, c, nil)
	spawned := 0
	h.m.spawn = func(context.Context, *worker) { spawned++ }
	h.m.Add(t.Context(), podUID, c, instanceID, h.clk.Now(), Target{})
	assert.Zero(t, spawned)
	h.m.Add(t.Context(), podUID, c, "c-2", h.clk.Now(), Target{})
	assert.Equal(t, 2, spawned, "another instance has workers of its own")
}

func TestManagerInstanceWithoutProbes(t *testing.T) {
	h := newWorkerHarness(t, &corev1.Container{Name: "app"}, nil)
	assert.Empty(t, h.workers)
	assert.True(t, h.m.Started(podUID, "app", instanceID))
	assert.True(t, h.m.Ready(podUID, "app", instanceID), "no readiness probe: ready once started")
	assert.False(t, h.m.Ready(podUID, "app", "other"), "an instance not added is not ready")
	h.m.RemovePod(podUID)
	assert.False(t, h.m.Ready(podUID, "app", instanceID))
}

func TestManagerPriorStatusAfterAgentRestart(t *testing.T) {
	c := &corev1.Container{Name: "app", StartupProbe: probeSpec("startup", 1, 0, 1, 3), ReadinessProbe: probeSpec("ready", 10, 0, 1, 3)}
	h := newWorkerHarness(t, &corev1.Container{Name: "unrelated"}, map[string][]int{"ready": {1}})
	var spawned []Kind
	h.m.spawn = func(ctx context.Context, w *worker) {
		spawned = append(spawned, w.kind)
		h.workers[w.kind] = w
		h.ctxs[w.kind] = ctx
	}

	// Started a minute before the agent: the API server's started and ready stand.
	h.m.Add(t.Context(), podUID, c, instanceID, h.clk.Now().Add(-time.Minute), Target{Exec: h.fc.exec}, WithPriorStatus(true, true))
	assert.Equal(t, []Kind{Readiness}, spawned, "a started container is not startup-probed again")
	assert.True(t, h.m.Started(podUID, "app", instanceID))
	assert.True(t, h.m.Ready(podUID, "app", instanceID))
	for range 2 {
		require.True(t, h.probe(Readiness))
	}
	assert.True(t, h.m.Ready(podUID, "app", instanceID), "ready until the readiness probe fails failureThreshold times")
	require.True(t, h.probe(Readiness))
	assert.False(t, h.m.Ready(podUID, "app", instanceID))

	// Started just before the agent (within the kubelet's 10 seconds): the prior status is not used.
	spawned = nil
	h.m.Add(t.Context(), podUID, c, "c-2", h.clk.Now().Add(-5*time.Second), Target{Exec: h.fc.exec}, WithPriorStatus(true, true))
	assert.Equal(t, []Kind{Startup, Readiness}, spawned)
	assert.False(t, h.m.Started(podUID, "app", "c-2"))
	assert.Equal(t, Failure, h.m.Result(podUID, "app", "c-2", Readiness))
}

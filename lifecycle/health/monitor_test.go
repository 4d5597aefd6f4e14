package health

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// fakeRuntime answers Status with what the test sets.
type fakeRuntime struct {
	mu     sync.Mutex
	status *Status
	err    error
}

func (f *fakeRuntime) set(st *Status, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.err = st, err
}

func (f *fakeRuntime) Status(context.Context) (*Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.status, f.err
}

func ready() *Status {
	return &Status{Conditions: []Condition{{Type: RuntimeReady, Status: true}, {Type: NetworkReady, Status: true}}}
}

// recorder keeps the conditions a Monitor reports.
type recorder struct {
	mu  sync.Mutex
	got []corev1.NodeCondition
}

func (r *recorder) cb(n *corev1.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(nil, n.Status.Conditions, 1)
	r.got = append(r.got, n.Status.Conditions[0])
}

func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.got {
		out = append(out, string(c.Status)+" "+c.Reason+" "+c.Message)
	}
	return out
}

func TestMonitorFollowsTheRuntimeAsTheKubelet(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	rt := &fakeRuntime{}
	m := NewMonitor(Config{Checker: rt, Clock: clk, Period: 5 * time.Second, Threshold: 30 * time.Second})
	var rec recorder
	m.NotifyNodeStatus(ctx, rec.cb)
	require.NoError(t, m.Ping(ctx), "the agent lives: the Lease is renewed whatever the runtime says")

	// Before the first answer the kubelet does not claim Ready.
	assert.Equal(t, []string{"False KubeletNotReady [container runtime status check may not have completed yet, network state unknown]"}, rec.messages())

	rt.set(ready(), nil)
	m.Check(ctx)
	require.NoError(t, m.Err())
	assert.Equal(t, "True KubeletReady "+MessageReady, rec.messages()[1])

	// Down (a kill -9): the calls fail, and the node stays Ready for the threshold...
	rt.set(nil, errors.New("connection refused"))
	for range 5 {
		clk.Step(5 * time.Second)
		m.Check(ctx)
	}
	require.NoError(t, m.Err(), "25 s without an answer is within the 30 s threshold")
	assert.Len(t, rec.messages(), 2, "no change reported")
	// ... and then turns NotReady with the kubelet's message.
	clk.Step(5 * time.Second)
	m.Check(ctx)
	require.EqualError(t, m.Err(), "container runtime is down")
	assert.Equal(t, "False KubeletNotReady container runtime is down", rec.messages()[2])
	m.Check(ctx)
	assert.Len(t, rec.messages(), 3, "an unchanged condition is not reported again")

	// Back: Ready at the first answer.
	rt.set(ready(), nil)
	clk.Step(5 * time.Second)
	m.Check(ctx)
	require.NoError(t, m.Err())
	assert.Equal(t, "True KubeletReady "+MessageReady, rec.messages()[3])
}

func TestMonitorNotReadyConditionsAtOnce(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	rt := &fakeRuntime{}
	m := NewMonitor(Config{Checker: rt, Clock: clk})

	rt.set(&Status{Conditions: []Condition{
		{Type: RuntimeReady, Status: true},
		{Type: NetworkReady, Status: false, Reason: "NetworkPluginNotReady", Message: "Network plugin returns error: cni plugin not initialized"},
	}}, nil)
	m.Check(ctx)
	assert.EqualError(t, m.Err(), "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized")

	rt.set(&Status{Conditions: []Condition{
		{Type: RuntimeReady, Status: false, Reason: "ContainerdNotReady", Message: "shutting down"},
		{Type: NetworkReady, Status: true},
	}}, nil)
	m.Check(ctx)
	assert.EqualError(t, m.Err(), "container runtime not ready: RuntimeReady=false reason:ContainerdNotReady message:shutting down",
		"a runtime that says it is not ready is not ready at once, well within the threshold")

	// A status without the conditions is not ready either, as the kubelet reads it (<nil>).
	rt.set(&Status{}, nil)
	m.Check(ctx)
	assert.EqualError(t, m.Err(), "[container runtime not ready: <nil>, container runtime network not ready: <nil>]")
	c := m.ReadyCondition()
	assert.Equal(t, corev1.ConditionFalse, c.Status)
	assert.Equal(t, ReasonNotReady, c.Reason)

	// Not ready for longer than the threshold: both errors, joined as the kubelet joins them.
	clk.Step(DefaultThreshold)
	m.Check(ctx)
	assert.EqualError(t, m.Err(), "[container runtime is down, container runtime not ready: <nil>, container runtime network not ready: <nil>]")
}

func TestMonitorRunAsksEveryPeriod(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	var mu sync.Mutex
	calls := 0
	m := NewMonitor(Config{Clock: clk, Period: 2 * time.Second, Checker: CheckerFunc(func(context.Context) (*Status, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return ready(), nil
	})})
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	count := func() int { mu.Lock(); defer mu.Unlock(); return calls }
	require.Eventually(t, func() bool { return count() == 1 && clk.HasWaiters() }, 10*time.Second, time.Millisecond)
	clk.Step(2 * time.Second)
	require.Eventually(t, func() bool { return count() == 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, m.Err())
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

func TestMonitorRuntimeErrLeavesTheNetworkOut(t *testing.T) {
	ctx := context.Background()
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	rt := &fakeRuntime{}
	m := NewMonitor(Config{Checker: rt, Clock: clk})
	require.EqualError(t, m.RuntimeErr(), "container runtime status check may not have completed yet")
	rt.set(&Status{Conditions: []Condition{{Type: RuntimeReady, Status: true}}}, nil)
	m.Check(ctx)
	require.NoError(t, m.RuntimeErr(), "host-network pods run without a pod network")
	require.EqualError(t, m.Err(), "container runtime network not ready: <nil>")
	rt.set(nil, errors.New("down"))
	clk.Step(DefaultThreshold)
	m.Check(ctx)
	require.EqualError(t, m.RuntimeErr(), "container runtime is down")
}

// TestNotReadyJoinsTheRuntimeErrors: another part's reason (the node shutdown manager's) turns
// the node NotReady at the next check, joined after the runtime's as the kubelet's
// ReadyCondition joins them; /healthz's RuntimeErr leaves it out.
func TestNotReadyJoinsTheRuntimeErrors(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC))
	rt := &fakeRuntime{status: ready()}
	var asked atomic.Int32
	checker := CheckerFunc(func(ctx context.Context) (*Status, error) { asked.Add(1); return rt.Status(ctx) })
	var mu sync.Mutex
	var notReady error
	m := NewMonitor(Config{Checker: checker, Clock: clk, NotReady: func() error {
		mu.Lock()
		defer mu.Unlock()
		return notReady
	}})
	var r recorder
	m.NotifyNodeStatus(context.Background(), r.cb)
	m.Check(context.Background())
	mu.Lock()
	notReady = errors.New("node is shutting down")
	mu.Unlock()
	m.Report(context.Background()) // at once, the runtime not asked
	assert.Equal(t, int32(1), asked.Load(), "Report does not ask the runtime")
	m.Check(context.Background())
	rt.set(nil, errors.New("unreachable"))
	clk.Step(DefaultThreshold)
	m.Check(context.Background())
	assert.Equal(t, []string{
		"False KubeletNotReady [container runtime status check may not have completed yet, network state unknown]",
		"True KubeletReady vk-static is posting ready status",
		"False KubeletNotReady node is shutting down",
		"False KubeletNotReady [container runtime is down, node is shutting down]",
	}, r.messages())
	assert.EqualError(t, m.RuntimeErr(), "container runtime is down")
}

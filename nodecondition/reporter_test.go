package nodecondition

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func cond(t corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: t, Status: s, Reason: string(t) + string(s)}
}

// A Reporter passes the conditions on Register's first report and whenever they change, and
// names the conditions whose status changed.
func TestReporter(t *testing.T) {
	var r Reporter
	now := []corev1.NodeCondition{cond("A", corev1.ConditionFalse), cond("B", corev1.ConditionFalse)}
	current := func() []corev1.NodeCondition { return now }
	var changes []string
	changed := func(was, now corev1.NodeCondition) {
		changes = append(changes, string(now.Type)+":"+string(was.Status)+"→"+string(now.Status))
	}
	r.Report(current, changed) // no callback: nothing to do

	var got [][]corev1.NodeCondition
	r.Register(func(n *corev1.Node) { got = append(got, n.Status.Conditions) })
	r.Report(current, changed)
	require.Len(t, got, 1, "the first report after Register")
	assert.Equal(t, now, got[0])
	assert.Empty(t, changes, "nothing was passed before: nothing changed")

	r.Report(current, changed)
	assert.Len(t, got, 1, "unchanged: not passed again")

	now = []corev1.NodeCondition{cond("A", corev1.ConditionFalse), {Type: "B", Status: corev1.ConditionFalse, Message: "new"}}
	r.Report(current, changed)
	assert.Len(t, got, 2, "a new message is a change")
	assert.Empty(t, changes, "its status is the same")

	now = []corev1.NodeCondition{cond("A", corev1.ConditionTrue), cond("B", corev1.ConditionFalse)}
	r.Report(current, nil)
	now = []corev1.NodeCondition{cond("A", corev1.ConditionTrue), cond("B", corev1.ConditionTrue)}
	r.Report(current, changed)
	assert.Len(t, got, 4)
	assert.Equal(t, []string{"B:False→True"}, changes)

	r.Register(func(n *corev1.Node) { got = append(got, n.Status.Conditions) })
	r.Report(current, changed)
	assert.Len(t, got, 5, "a new callback gets the conditions as they are")
	assert.Len(t, changes, 1)
}

// Every passes at once, then at each tick, again at once when a pass asks, and returns when
// the context ends.
func TestEvery(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	passes := make(chan int, 10)
	n := 0
	done := make(chan error, 1)
	go func() {
		done <- Every(ctx, clk, time.Second, func(context.Context) bool {
			n++
			passes <- n
			return n == 2 // the second pass asks for a third at once
		})
	}()
	assert.Equal(t, 1, <-passes, "at once")
	require.Eventually(t, clk.HasWaiters, 10*time.Second, time.Millisecond)
	clk.Step(time.Second)
	assert.Equal(t, 2, <-passes, "at the tick")
	assert.Equal(t, 3, <-passes, "again at once")
	select {
	case p := <-passes:
		t.Fatalf("pass %d without a tick", p)
	default:
	}
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return when the context ended")
	}
}

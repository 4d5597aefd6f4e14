package memlimit

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
)

func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		maxPods int32
		want    int64
	}{
		{-1, 32 << 20},
		{0, 32 << 20},
		{110, 32<<20 + 110*20<<10},
		{10000, 32<<20 + 10000*20<<10},
	} {
		if got := Budget(tc.maxPods); got != tc.want {
			t.Errorf("Budget(%d) = %d, want %d", tc.maxPods, got, tc.want)
		}
	}
}

func TestCheckRaisesTheLimitOnlyWhenTheLiveHeapNearsIt(t *testing.T) {
	var set []int64
	live := uint64(0)
	l := &Limiter{limit: 100 << 20, live: func() uint64 { return live }, set: func(v int64) int64 { set = append(set, v); return 0 }}

	for _, live = range []uint64{0, 50 << 20, 90 << 20} {
		l.check(logr.Discard())
	}
	if len(set) != 0 || l.Limit() != 100<<20 {
		t.Fatalf("limit changed to %v with the live heap at or under 90%%", set)
	}

	live = 95 << 20
	l.check(logr.Discard())
	if len(set) != 1 || l.Limit() != set[0] {
		t.Fatalf("set %v, limit %d: want one raise", set, l.Limit())
	}
	if float64(live) > raiseAbove*float64(l.Limit()) {
		t.Errorf("raised limit %d still leaves the live heap %d above %.0f%% of it", l.Limit(), live, raiseAbove*100)
	}
	l.check(logr.Discard())
	if len(set) != 1 {
		t.Errorf("raised again with the live heap unchanged: %v", set)
	}
}

func TestNewSetsTheRuntimeLimitAndRunStopsWithItsContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)

	l := New(1 << 40)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Fatalf("runtime limit %d, want %d", got, int64(1<<40))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx, logr.Discard()); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
}

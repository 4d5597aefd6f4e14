package nodecondition

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// Reporter passes Node conditions to the callback a NotifyNodeStatus registered, when they
// change. The zero Reporter has no callback; it is safe for concurrent use.
type Reporter struct {
	reporting sync.Mutex // one report at a time, so that the callback sees them in order

	mu       sync.Mutex
	notify   func(*corev1.Node)
	reported []corev1.NodeCondition // the conditions last passed to notify; nil: none yet
}

// Register makes cb the callback and forgets what was passed before: the next Report passes
// its conditions, whatever they are.
func (r *Reporter) Register(cb func(*corev1.Node)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notify, r.reported = cb, nil
}

// Report computes the conditions with current and, if there is a callback and they differ from
// the ones last passed to it, passes it a Node holding them. Before that it calls changed (if
// not nil) with each condition whose status differs from the one of its type passed last (none
// after Register). Reports are made one at a time, current included.
func (r *Reporter) Report(current func() []corev1.NodeCondition, changed func(was, now corev1.NodeCondition)) {
	r.reporting.Lock()
	defer r.reporting.Unlock()
	conds := current()
	r.mu.Lock()
	cb := r.notify
	if cb == nil || (r.reported != nil && slices.Equal(conds, r.reported)) {
		r.mu.Unlock()
		return
	}
	previous := r.reported
	r.reported = conds
	r.mu.Unlock()
	if changed != nil {
		for _, now := range conds {
			i := slices.IndexFunc(previous, func(c corev1.NodeCondition) bool { return c.Type == now.Type })
			if i >= 0 && previous[i].Status != now.Status {
				changed(previous[i], now)
			}
		}
	}
	cb(&corev1.Node{Status: corev1.NodeStatus{Conditions: conds}})
}

// Every calls pass at once and then at every tick of a ticker of period on clk, until ctx
// ends; a pass that returns true is followed by another at once, unless ctx has ended. It
// returns nil when ctx ends.
func Every(ctx context.Context, clk clock.WithTicker, period time.Duration, pass func(context.Context) (again bool)) error {
	ticker := clk.NewTicker(period)
	defer ticker.Stop()
	for {
		if pass(ctx) && ctx.Err() == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

package node

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultEventHoldBack is how long events wait, at most, for the pod status writes queued
// before them (StatusBacklog).
const DefaultEventHoldBack = 2 * time.Second

// StatusBacklog tells the event recorder's workers to wait while pod status writes are queued
// or in flight, for at most a hold-back counted from when the backlog began. In a burst (a
// thousand pods starting at once) the API server, which everything shares, then spends itself
// on the statuses that show pods Running, and the Started events follow them: an event carries
// the time it happened, not the time it is posted, so nothing that reads it sees a difference.
// Under writes that never let up the hold-back runs out and events go as they come.
//
// The pod controller reports its status queue (Track) and each write (begin, end); waiting is
// on a channel closed when the backlog drains, not on a poll.
type StatusBacklog struct {
	holdBack time.Duration
	clock    clock.Clock

	mu       sync.Mutex
	queued   func() int // status writes queued, not yet taken by a worker; nil before Track
	inFlight int
	since    time.Time     // when a waiter first found the backlog busy; zero once it drained
	drained  chan struct{} // closed, and replaced, when the backlog drains
}

// NewStatusBacklog returns a backlog whose waits last at most holdBack (≤ 0:
// DefaultEventHoldBack) from when the backlog began; nil clk is the real clock.
func NewStatusBacklog(holdBack time.Duration, clk clock.Clock) *StatusBacklog {
	if holdBack <= 0 {
		holdBack = DefaultEventHoldBack
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &StatusBacklog{holdBack: holdBack, clock: clk, drained: make(chan struct{})}
}

// Track counts queued as the writes waiting for a worker (the status queue's length).
func (b *StatusBacklog) Track(queued func() int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queued = queued
}

// begin marks a status write taken by a worker; a nil backlog does nothing.
func (b *StatusBacklog) begin() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight++
}

// end marks a status write done (and requeued, if it must be written again); a nil backlog
// does nothing.
func (b *StatusBacklog) end() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
	if !b.busyLocked() {
		close(b.drained)
		b.drained = make(chan struct{})
		b.since = time.Time{}
	}
}

func (b *StatusBacklog) busyLocked() bool {
	return b.inFlight > 0 || (b.queued != nil && b.queued() > 0)
}

// Wait returns once no status write is queued or in flight, the hold-back since the backlog
// began has passed, or ctx ends; at once for a nil backlog.
func (b *StatusBacklog) Wait(ctx context.Context) {
	if b == nil {
		return
	}
	b.mu.Lock()
	if !b.busyLocked() {
		b.mu.Unlock()
		return
	}
	now := b.clock.Now()
	if b.since.IsZero() {
		b.since = now
	}
	left := b.holdBack - now.Sub(b.since)
	drained := b.drained
	b.mu.Unlock()
	if left <= 0 {
		return
	}
	t := b.clock.NewTimer(left)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C():
	case <-ctx.Done():
	}
}

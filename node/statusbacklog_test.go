package node

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// waitInBackground runs b.Wait and returns a flag set when it has returned.
func waitInBackground(ctx context.Context, b *StatusBacklog) *atomic.Bool {
	var returned atomic.Bool
	go func() {
		b.Wait(ctx)
		returned.Store(true)
	}()
	return &returned
}

// An event waits for the status writes queued or in flight before it, and goes as soon as the
// last is done.
func TestStatusBacklogHoldsEventsUntilTheWritesDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var queued atomic.Int64
		b := NewStatusBacklog(time.Minute, nil)
		b.Track(func() int { return int(queued.Load()) })

		start := time.Now()
		b.Wait(t.Context())
		assert.Zero(t, time.Since(start), "nothing queued: no wait")

		queued.Store(2)
		returned := waitInBackground(t.Context(), b)
		synctest.Wait()
		assert.False(t, returned.Load(), "two writes queued")

		queued.Store(1) // a worker takes one
		b.begin()
		b.end() // one still queued
		synctest.Wait()
		assert.False(t, returned.Load(), "one write still queued")

		queued.Store(0)
		b.begin()
		b.end()
		synctest.Wait()
		assert.True(t, returned.Load(), "drained")
		assert.Zero(t, time.Since(start), "released by the drain, not by the hold-back")
	})
}

// Writes that never let up hold events back for the hold-back at most, counted from when the
// backlog began: later events go at once, until it drains and a new backlog begins.
func TestStatusBacklogHoldBackRunsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewStatusBacklog(2*time.Second, nil)
		b.Track(func() int { return 0 })
		b.begin() // a write in flight throughout

		start := time.Now()
		b.Wait(t.Context())
		assert.Equal(t, 2*time.Second, time.Since(start), "held back for the hold-back")

		start = time.Now()
		b.Wait(t.Context())
		assert.Zero(t, time.Since(start), "the hold-back has run out for this backlog")

		b.end() // drained: the next backlog holds events back again
		b.begin()
		start = time.Now()
		b.Wait(t.Context())
		assert.Equal(t, 2*time.Second, time.Since(start))
		b.end()
	})
}

// A waiting event goes when the recorder stops, and a nil backlog holds nothing back.
func TestStatusBacklogWaitEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewStatusBacklog(time.Minute, nil)
		b.begin()
		ctx, cancel := context.WithCancel(t.Context())
		returned := waitInBackground(ctx, b)
		synctest.Wait()
		assert.False(t, returned.Load())
		cancel()
		synctest.Wait()
		assert.True(t, returned.Load())
		b.end()

		var none *StatusBacklog
		none.begin()
		none.end()
		none.Wait(t.Context()) // returns at once
	})
}

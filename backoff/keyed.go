package backoff

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Keyed is the policy kept per key, as client-go's flowcontrol.Backoff, which the kubelet uses
// for its crash-loop and image-pull back-offs: each key's delay starts at Initial, doubles with
// every failure up to Max, and starts over once the key has been quiet for resetAfter — no
// failure that long after the last one was recorded (a container that ran that long, an image
// not pulled again). It is safe for concurrent use.
type Keyed[K comparable] struct {
	policy     Policy
	resetAfter time.Duration
	clock      clock.PassiveClock

	mu      sync.Mutex
	entries map[K]keyedEntry
}

type keyedEntry struct {
	delay time.Duration
	// recorded is when the failure was recorded (the clock's time in Next): the retry may
	// follow delay after it, and the quiet period is counted from it.
	recorded time.Time
}

// NewKeyed returns a Keyed whose keys follow p and start over after resetAfter without a
// failure, timed by clk.
func NewKeyed[K comparable](p Policy, resetAfter time.Duration, clk clock.PassiveClock) *Keyed[K] {
	return &Keyed[K]{policy: p, resetAfter: resetAfter, clock: clk, entries: map[K]keyedEntry{}}
}

// Next records a failure of key that happened at failedAt and returns the delay before its
// retry: Initial for a key's first failure, or one that comes resetAfter or more after the
// last was recorded; else twice the last delay, up to Max.
func (b *Keyed[K]) Next(key K, failedAt time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.quiet(e, failedAt) {
		e.delay = b.policy.Initial
	} else {
		e.delay = b.policy.after(e.delay)
	}
	e.recorded = b.clock.Now()
	b.entries[key] = e
	return e.delay
}

// Get returns key's current delay, 0 when it has none.
func (b *Keyed[K]) Get(key K) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.entries[key].delay
}

// Until returns when key's back-off ends — its last failure's record plus its delay — or the
// zero time when it has none.
func (b *Keyed[K]) Until(key K) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok {
		return time.Time{}
	}
	return e.recorded.Add(e.delay)
}

// Reset forgets key, after a success or when what it names is gone: its next failure starts at
// Initial.
func (b *Keyed[K]) Reset(key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, key)
}

// GC forgets every key that has been quiet for resetAfter by the clock's time: its next failure
// would start over anyway, so only the memory is given back.
func (b *Keyed[K]) GC() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for key, e := range b.entries {
		if b.quiet(e, now) {
			delete(b.entries, key)
		}
	}
}

func (b *Keyed[K]) quiet(e keyedEntry, at time.Time) bool {
	return at.Sub(e.recorded) >= b.resetAfter
}

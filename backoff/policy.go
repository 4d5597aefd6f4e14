package backoff

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
)

// Policy is a delay that starts at Initial and doubles up to Max.
type Policy struct {
	Initial, Max time.Duration
}

// after is the delay that follows d: twice d, up to Max.
func (p Policy) after(d time.Duration) time.Duration { return min(2*d, p.Max) }

// Start begins a sequence of delays.
func (p Policy) Start() *Delays { return &Delays{p: p, next: p.Initial} }

// Limiter is the policy as a work queue's per-item rate limiter: each item's delay grows with
// its failures and starts over when the queue Forgets it.
func Limiter[T comparable](p Policy) workqueue.TypedRateLimiter[T] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[T](p.Initial, p.Max)
}

// WaitBackoff is the policy as client-go's wait.Backoff, with jitter (a fraction of each delay
// added at random, so that many clients do not retry in step), for a reflector.
func (p Policy) WaitBackoff(jitter float64) *wait.Backoff {
	steps := 1
	for d := p.Initial; d < p.Max; d *= 2 {
		steps++
	}
	return &wait.Backoff{Duration: p.Initial, Factor: 2, Jitter: jitter, Steps: steps, Cap: p.Max}
}

// Delays is one sequence of retries. It is not safe for concurrent use.
type Delays struct {
	p    Policy
	next time.Duration
}

// Next returns the delay before the next retry and doubles the one after it, up to Max.
func (d *Delays) Next() time.Duration {
	delay := d.next
	d.next = d.p.after(d.next)
	return delay
}

// Reset starts over at Initial, after a success.
func (d *Delays) Reset() { d.next = d.p.Initial }

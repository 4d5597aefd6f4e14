package criproxy

import (
	"sync"
	"time"
)

// Calls are the unary calls of one method recorded in a window.
type Calls struct {
	Durations []time.Duration // one per call that ended in the window, in the order they ended
	Errors    int             // of them, those that returned an error
	// MaxInFlight is the most calls of the method that were in flight at once: 1 means the
	// agent made them one at a time.
	MaxInFlight int
}

// recorder keeps the calls by method since the last reset.
type recorder struct {
	mu       sync.Mutex
	calls    map[string]*Calls
	inFlight map[string]int
}

func newRecorder() *recorder {
	return &recorder{calls: map[string]*Calls{}, inFlight: map[string]int{}}
}

// begin counts a call of method in flight; the function it returns records it as ended.
func (r *recorder) begin(method string, now func() time.Time) (end func(failed bool)) {
	start := now()
	r.mu.Lock()
	r.inFlight[method]++
	c := r.callsOf(method)
	c.MaxInFlight = max(c.MaxInFlight, r.inFlight[method])
	r.mu.Unlock()
	return func(failed bool) {
		d := now().Sub(start)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.inFlight[method]--
		c := r.callsOf(method)
		c.Durations = append(c.Durations, d)
		if failed {
			c.Errors++
		}
	}
}

func (r *recorder) callsOf(method string) *Calls {
	c := r.calls[method]
	if c == nil {
		c = &Calls{}
		r.calls[method] = c
	}
	return c
}

// reset starts a new window; calls in flight are recorded in it when they end, and count as
// in flight in it from the start.
func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = map[string]*Calls{}
	for m, n := range r.inFlight {
		if n > 0 {
			r.callsOf(m).MaxInFlight = n
		}
	}
}

// snapshot copies the window's calls.
func (r *recorder) snapshot() map[string]Calls {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Calls, len(r.calls))
	for m, c := range r.calls {
		out[m] = Calls{Durations: append([]time.Duration(nil), c.Durations...), Errors: c.Errors, MaxInFlight: c.MaxInFlight}
	}
	return out
}

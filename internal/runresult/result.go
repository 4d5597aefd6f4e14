package runresult

import "sync"

// Result is how a Run ended. The zero value is a Run that has not returned yet; it is safe for
// concurrent use and must not be copied.
type Result struct {
	mu   sync.Mutex
	done chan struct{} // made on first use, so that the zero value is ready
	err  error
}

// Done is closed when Run has returned.
func (r *Result) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doneLocked()
}

// Err is what Run returned, once Done is closed; nil before.
func (r *Result) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Finish records err as what Run returned and closes Done. It is called once, as Run returns.
func (r *Result) Finish(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.err = err
	close(r.doneLocked())
}

func (r *Result) doneLocked() chan struct{} {
	if r.done == nil {
		r.done = make(chan struct{})
	}
	return r.done
}

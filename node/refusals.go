package node

import (
	"sync"
)

// refusals remembers, per pod full name and kind of request ("create", "mirror"), the last
// refusal that was reported (as an Event and an error log), so that a request retried on every
// resync is reported once per distinct answer rather than once a minute.
type refusals struct {
	mu   sync.Mutex
	last map[string]map[string]string // full name → kind → error message
}

// first records err for key and kind and reports whether it differs from the last one
// recorded: whether it should be reported.
func (r *refusals) first(key, kind string, err error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]map[string]string{}
	}
	kinds := r.last[key]
	if kinds == nil {
		kinds = map[string]string{}
		r.last[key] = kinds
	}
	if msg := err.Error(); kinds[kind] != msg {
		kinds[kind] = msg
		return true
	}
	return false
}

// clear forgets the refusal of key and kind: the request succeeded, so a later refusal is news.
func (r *refusals) clear(key, kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if kinds := r.last[key]; kinds != nil {
		delete(kinds, kind)
		if len(kinds) == 0 {
			delete(r.last, key)
		}
	}
}

// forget drops everything recorded for key, which no longer names anything.
func (r *refusals) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, key)
}

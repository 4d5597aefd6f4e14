package queue

import "sync"

// Queue is a keyed coalescing FIFO; see the package documentation for its guarantees. It must
// be made with [New].
type Queue[K comparable, V any] struct {
	merge func(old, new V) V

	mu    sync.Mutex
	items []Item[K, V]
	index map[K]int // position in items of each pending key
	ready chan struct{}
}

// Item is one pending key and its (merged) value.
type Item[K comparable, V any] struct {
	Key   K
	Value V
}

// New returns an empty Queue whose values for a pending key are combined by merge, which is
// called with the Queue locked and so must be quick and must not call the Queue. A nil merge
// keeps the newest value.
func New[K comparable, V any](merge func(old, new V) V) *Queue[K, V] {
	if merge == nil {
		merge = func(_, new V) V { return new }
	}
	return &Queue[K, V]{merge: merge, index: map[K]int{}, ready: make(chan struct{}, 1)}
}

// Add queues v under k, or merges it into the value of k if k is already pending, and wakes
// the consumer. It never blocks.
func (q *Queue[K, V]) Add(k K, v V) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i, ok := q.index[k]; ok {
		q.items[i].Value = q.merge(q.items[i].Value, v)
	} else {
		q.index[k] = len(q.items)
		q.items = append(q.items, Item[K, V]{Key: k, Value: v})
	}
	// Signalled under the lock, so that Take, which drains it under the lock too, never leaves
	// a wake-up behind for items it has already returned.
	select {
	case q.ready <- struct{}{}:
	default: // a wake-up is already pending; the consumer's Take will see this item as well
	}
}

// Ready receives after an [Queue.Add]. A burst of Adds may be one receive.
func (q *Queue[K, V]) Ready() <-chan struct{} { return q.ready }

// Take returns the pending items, in the order their keys were first added, and empties the
// Queue. The slice is the caller's. After a receive from [Queue.Ready] it holds at least one
// item, unless another consumer took them first.
func (q *Queue[K, V]) Take() []Item[K, V] {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	clear(q.index)
	select {
	case <-q.ready:
	default:
	}
	return items
}

package process

import (
	"context"
	"sync"

	"github.com/vk-static/vk-static/lifecycle"
)

// subscriber delivers events to one NotifyContainers callback, in order, from a goroutine of
// its own, so that a slow callback delays no container operation.
type subscriber struct {
	cb    func(lifecycle.ContainerEvent)
	mu    sync.Mutex
	queue []lifecycle.ContainerEvent
	wake  chan struct{}
}

// NotifyContainers calls cb for every container start and exit until ctx ends.
func (r *Runtime) NotifyContainers(ctx context.Context, cb func(lifecycle.ContainerEvent)) {
	s := &subscriber{cb: cb, wake: make(chan struct{}, 1)}
	r.mu.Lock()
	r.subscribers[s] = struct{}{}
	r.mu.Unlock()
	go func() {
		defer func() {
			r.mu.Lock()
			delete(r.subscribers, s)
			r.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			s.mu.Lock()
			events := s.queue
			s.queue = nil
			s.mu.Unlock()
			for _, ev := range events {
				if ctx.Err() != nil {
					return
				}
				s.cb(ev)
			}
		}
	}()
}

func (r *Runtime) emit(ev lifecycle.ContainerEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subscribers {
		s.mu.Lock()
		s.queue = append(s.queue, ev)
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

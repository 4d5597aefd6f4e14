package process

import (
	"context"

	"github.com/vk-static/vk-static/internal/queue"
	"github.com/vk-static/vk-static/lifecycle"
)

// subscriber delivers events to one NotifyContainers callback, in order, from a goroutine of
// its own, so that a slow callback delays no container operation. Its events share one key
// and are merged by appending, so none is coalesced away: every start and exit is delivered.
type subscriber struct {
	cb     func(lifecycle.ContainerEvent)
	events *queue.Queue[struct{}, []lifecycle.ContainerEvent]
}

// NotifyContainers calls cb for every container start and exit until ctx ends.
func (r *Runtime) NotifyContainers(ctx context.Context, cb func(lifecycle.ContainerEvent)) {
	s := &subscriber{cb: cb, events: queue.New[struct{}](appendEvents)}
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
			case <-s.events.Ready():
			}
			for _, batch := range s.events.Take() {
				for _, ev := range batch.Value {
					if ctx.Err() != nil {
						return
					}
					s.cb(ev)
				}
			}
		}
	}()
}

func appendEvents(old, new []lifecycle.ContainerEvent) []lifecycle.ContainerEvent {
	return append(old, new...)
}

func (r *Runtime) emit(ev lifecycle.ContainerEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subscribers {
		s.events.Add(struct{}{}, []lifecycle.ContainerEvent{ev})
	}
}

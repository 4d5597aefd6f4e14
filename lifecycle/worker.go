package lifecycle

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// podWorker syncs one pod, one sync at a time, whenever something about it changed (a call, a
// container event, a probe result) or a timer it set fires (a back-off ending, the active
// deadline, the volume refresh). Kicks while a sync runs coalesce into one more sync; nothing
// polls. It is the kubelet's pod worker: a pod's slow stop (its grace period) holds up no other.
type podWorker struct {
	kick    chan struct{}
	timer   clock.Timer // the next wake, nil for none
	due     time.Time
	running bool // its goroutine has started
}

// startWorkerLocked gives uid a worker, started once Run has, and kicks it.
func (p *Provider) startWorkerLocked(uid types.UID) {
	w, ok := p.workers[uid]
	if !ok {
		w = &podWorker{kick: make(chan struct{}, 1)}
		p.workers[uid] = w
	}
	if !w.running && p.runCtx != nil {
		w.running = true
		ctx := p.runCtx
		p.wg.Go(func() { p.runWorker(ctx, uid, w) })
	}
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// kickLocked makes uid's worker sync again soon.
func (p *Provider) kickLocked(uid types.UID) {
	if w, ok := p.workers[uid]; ok {
		w.poke()
	}
}

func (p *Provider) kick(uid types.UID) {
	p.mu.Lock()
	p.kickLocked(uid)
	p.mu.Unlock()
}

// wakeLocked makes uid's worker sync at at (or earlier, if already due earlier).
func (p *Provider) wakeLocked(uid types.UID, at time.Time) {
	w, ok := p.workers[uid]
	if !ok || at.IsZero() {
		return
	}
	if w.timer != nil && !w.due.IsZero() && !at.Before(w.due) && w.due.After(p.cfg.Clock.Now()) {
		return // an earlier wake is set
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.due = at
	w.timer = p.cfg.Clock.AfterFunc(max(at.Sub(p.cfg.Clock.Now()), 0), w.poke)
}

// runWorker syncs uid until the pod is forgotten or ctx ends.
func (p *Provider) runWorker(ctx context.Context, uid types.UID, w *podWorker) {
	defer func() {
		p.mu.Lock()
		if w.timer != nil {
			w.timer.Stop()
		}
		p.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		if forgotten := p.syncPod(ctx, uid); forgotten {
			return
		}
	}
}

package mock

import (
	"container/heap"
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/internal/queue"
)

// background is the provider's pending work: status notifications not yet delivered and delayed
// transitions not yet due. Its fields are guarded by Provider.mu; one goroutine (run) does
// the work while the context given to NotifyPods lives.
type background struct {
	callback func(*corev1.Pod)
	running  bool

	// notifications coalesce per pod: a pod's key is queued once, and delivery sends its newest
	// state. A notification put back after its delivery was cut short (requeue) never replaces
	// a newer one: the higher seq wins.
	notifications *queue.Queue[podKey, notification]
	seq           uint64

	due transitionHeap
	// wake has one key, "a transition was scheduled": the transitions themselves are in due.
	wake *queue.Queue[struct{}, struct{}]
}

// notification is one state of a pod to deliver, numbered in the order it was stored.
type notification struct {
	seq uint64
	pod *corev1.Pod
}

func newerNotification(old, new notification) notification {
	if new.seq > old.seq {
		return new
	}
	return old
}

func newBackground() background {
	return background{
		notifications: queue.New[podKey, notification](newerNotification),
		wake:          queue.New[struct{}, struct{}](nil),
	}
}

// notifyLocked queues pod (read-only from now on) for delivery.
func (b *background) notifyLocked(key podKey, pod *corev1.Pod) {
	b.seq++
	b.notifications.Add(key, notification{seq: b.seq, pod: pod})
}

// transitionKind is a delayed change of a pod's state.
type transitionKind int

const (
	becomeRunning transitionKind = iota // create-delay over
	finish                              // run-duration over: containers exit on their own
	terminate                           // delete-delay over: containers stopped
)

type transition struct {
	at   time.Time
	key  podKey
	uid  types.UID
	kind transitionKind
}

func (b *background) scheduleLocked(at time.Time, key podKey, uid types.UID, kind transitionKind) {
	heap.Push(&b.due, transition{at: at, key: key, uid: uid, kind: kind})
	b.wake.Add(struct{}{}, struct{}{})
}

// NotifyPods registers cb for status changes and starts the background goroutine, which stops
// with ctx. A later call replaces cb (and restarts the goroutine if its context has ended).
func (p *Provider) NotifyPods(ctx context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bg.callback = cb
	if p.bg.running {
		return
	}
	p.bg.running = true
	go p.run(ctx)
}

// run delivers notifications and applies due transitions until ctx ends.
func (p *Provider) run(ctx context.Context) {
	for {
		p.mu.Lock()
		now := p.cfg.Clock.Now()
		p.applyDueLocked(now)
		items, cb := p.bg.notifications.Take(), p.bg.callback
		var next time.Time
		if len(p.bg.due) > 0 {
			next = p.bg.due[0].at
		}
		if ctx.Err() != nil {
			p.bg.running = false
			p.requeue(items)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()

		if len(items) > 0 {
			for i, it := range items {
				if ctx.Err() != nil {
					p.mu.Lock()
					p.requeue(items[i:])
					p.mu.Unlock()
					break
				}
				cb(it.Value.pod)
			}
			continue // more may have arrived while delivering
		}

		p.wait(ctx, next)
	}
}

// wait returns when ctx ends, new work arrives or next (unless zero) is due.
func (p *Provider) wait(ctx context.Context, next time.Time) {
	var fire <-chan time.Time
	if !next.IsZero() {
		// Measured from the clock's time now, not from the loop's earlier reading: time may have
		// moved on since (a fake clock stepped by a test, or a slow callback), and a timer
		// measured from a stale reading would fire late — with a fake clock, never.
		d := next.Sub(p.cfg.Clock.Now())
		if d <= 0 {
			return
		}
		t := p.cfg.Clock.NewTimer(d)
		defer t.Stop()
		fire = t.C()
	}
	select {
	case <-ctx.Done():
	case <-p.bg.notifications.Ready():
		// Taken by the loop.
	case <-p.bg.wake.Ready():
		p.bg.wake.Take()
	case <-fire:
	}
}

// requeue puts undelivered notifications back, for a later NotifyPods: behind what is queued,
// and never over a newer state of the same pod. Called with p.mu held.
func (p *Provider) requeue(items []queue.Item[podKey, notification]) {
	for _, it := range items {
		p.bg.notifications.Add(it.Key, it.Value)
	}
}

// applyDueLocked applies every transition due at now. A transition whose pod is gone, was
// replaced (another UID) or changed state meanwhile is dropped.
func (p *Provider) applyDueLocked(now time.Time) {
	for len(p.bg.due) > 0 && !p.bg.due[0].at.After(now) {
		tr := heap.Pop(&p.bg.due).(transition)
		e, ok := p.pods[tr.key]
		if !ok || e.rec.uid != tr.uid {
			continue
		}
		t := metav1.NewTime(now)
		switch tr.kind {
		case becomeRunning:
			if e.terminating || e.rec.status.phase != corev1.PodPending {
				continue
			}
			running := e.rec.copyPod()
			prev := e.rec.status.full()
			running.Status = p.runningStatus(running, &prev, t)
			p.storeLocked(tr.key, e, running, now, e.rec)
			p.scheduleFinishLocked(tr.key, e, running, now)
		case finish:
			if e.terminating || e.rec.status.phase != corev1.PodRunning {
				continue
			}
			done := e.rec.copyPod()
			done.Status = terminatedStatus(done.Status, e.behaviour.exitCode, t)
			p.storeLocked(tr.key, e, done, now, e.rec)
		case terminate:
			if e.terminating {
				p.terminateLocked(tr.key, e, t)
			}
		}
	}
}

// transitionHeap orders transitions by due time (container/heap).
type transitionHeap []transition

func (h transitionHeap) Len() int           { return len(h) }
func (h transitionHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h transitionHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *transitionHeap) Push(x any)        { *h = append(*h, x.(transition)) }
func (h *transitionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

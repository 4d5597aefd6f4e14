package lifecycle

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// notifier delivers pod statuses to NotifyPods' callback from one goroutine, in the order they
// were built, coalesced per pod: a status built later is never overtaken by one built earlier
// (statuses are built under the provider's lock, but delivered outside it, since the callback
// may block), and a pod whose status changed twice before delivery is delivered once, newest.
type notifier struct {
	mu      sync.Mutex
	pending map[types.UID]*corev1.Pod
	order   []types.UID
	wake    chan struct{}
}

func newNotifier() *notifier {
	return &notifier{pending: map[types.UID]*corev1.Pod{}, wake: make(chan struct{}, 1)}
}

// enqueue queues pod for delivery, replacing a not yet delivered status of the same pod.
func (n *notifier) enqueue(pod *corev1.Pod) {
	n.mu.Lock()
	if _, queued := n.pending[pod.UID]; !queued {
		n.order = append(n.order, pod.UID)
	}
	n.pending[pod.UID] = pod
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// run delivers queued statuses to the callback cb returns (nil: they are dropped) until ctx
// ends.
func (n *notifier) run(ctx context.Context, cb func() func(*corev1.Pod)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		n.mu.Lock()
		order, pending := n.order, n.pending
		n.order, n.pending = nil, map[types.UID]*corev1.Pod{}
		n.mu.Unlock()
		notify := cb()
		for _, uid := range order {
			if notify != nil {
				notify(pending[uid])
			}
		}
	}
}

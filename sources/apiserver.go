package sources

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/watchstore"
	"github.com/vk-static/vk-static/podutil"
)

// APISource lists and watches the pods bound to one node — the field selector
// spec.nodeName=<node> is all the Node authorizer lets a node identity read — and sends the
// watch store's full contents as a snapshot after every change. Mirror pods arrive like any other pod
// (they carry kubernetes.io/config.mirror).
//
// Bursts are coalesced: the watch is never blocked by a slow consumer, and when the consumer
// is ready it gets the newest store contents. Unchanged pods are the same objects from one
// snapshot to the next (the store's), which the Merger uses to skip comparing them.
type APISource struct {
	client   kubernetes.Interface
	nodeName string
}

// NewAPISource returns a source of the pods bound to nodeName.
func NewAPISource(client kubernetes.Interface, nodeName string) *APISource {
	return &APISource{client: client, nodeName: nodeName}
}

// Name is podutil.APIServerSource.
func (s *APISource) Name() string { return podutil.APIServerSource }

// Run starts the watch and, once it has synced, sends a snapshot and then one after every
// change, until ctx is done. It returns after the watch has stopped.
func (s *APISource) Run(ctx context.Context, out chan<- Snapshot) {
	logger := klog.FromContext(ctx).WithValues("source", podutil.APIServerSource, "node", s.nodeName)
	ctx = klog.NewContext(ctx, logger)
	selector := fields.OneTermEqualSelector("spec.nodeName", s.nodeName).String()
	dirty := make(chan struct{}, 1)
	markDirty := func() {
		select {
		case dirty <- struct{}{}:
		default: // already pending; the next snapshot includes this change
		}
	}
	// A watch store rather than an informer: it reconnects within seconds after an API server
	// outage (an informer may wait up to 30 s), so API pods converge quickly when it returns.
	lw := cache.NewFilteredListWatchFromClient(s.client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.FieldSelector = selector })
	store := watchstore.New(lw, &corev1.Pod{}, markDirty)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		store.Run(ctx)
	}()
	defer wg.Wait()

	if !cache.WaitForCacheSync(ctx.Done(), store.HasSynced) {
		return
	}
	logger.V(2).Info("Pods of this node listed")
	snapshot := func() Snapshot {
		objs := store.List()
		pods := make([]*corev1.Pod, 0, len(objs))
		for _, obj := range objs {
			if pod, ok := obj.(*corev1.Pod); ok {
				pods = append(pods, pod)
			}
		}
		return Snapshot{Source: podutil.APIServerSource, Pods: pods}
	}

	// The first snapshot is the synced list, even when empty: that makes the source seen.
	pending, havePending := snapshot(), true
	for {
		var sendC chan<- Snapshot
		if havePending {
			sendC = out
		}
		select {
		case <-ctx.Done():
			return
		case sendC <- pending:
			havePending = false
		case <-dirty:
			// Newer than whatever is pending: replace it.
			pending, havePending = snapshot(), true
		}
	}
}

package sources

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// APISource lists and watches the pods bound to one node — the field selector
// spec.nodeName=<node> is all the Node authorizer lets a node identity read — and sends the
// informer's full store as a snapshot after every change. Mirror pods arrive like any other pod
// (they carry kubernetes.io/config.mirror).
//
// Bursts are coalesced: the informer is never blocked by a slow consumer, and when the consumer
// is ready it gets the newest store contents. Unchanged pods are the same objects from one
// snapshot to the next (the informer's), which the Merger uses to skip comparing them.
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

// Run starts the informer and, once it has synced, sends a snapshot and then one after every
// change, until ctx is done. It returns after the informer has stopped.
func (s *APISource) Run(ctx context.Context, out chan<- Snapshot) {
	logger := klog.FromContext(ctx).WithValues("source", podutil.APIServerSource, "node", s.nodeName)
	ctx = klog.NewContext(ctx, logger)
	selector := fields.OneTermEqualSelector("spec.nodeName", s.nodeName).String()
	factory := informers.NewSharedInformerFactoryWithOptions(s.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = selector }))
	informer := factory.Core().V1().Pods().Informer()

	dirty := make(chan struct{}, 1)
	markDirty := func() {
		select {
		case dirty <- struct{}{}:
		default: // already pending; the next snapshot includes this change
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { markDirty() },
		UpdateFunc: func(any, any) { markDirty() },
		DeleteFunc: func(any) { markDirty() },
	}); err != nil {
		logger.Error(err, "Cannot watch pods")
		return
	}

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		informer.RunWithContext(ctx)
	}()
	defer wg.Wait()

	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return
	}
	logger.V(2).Info("Pods of this node listed")
	store := informer.GetStore()
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

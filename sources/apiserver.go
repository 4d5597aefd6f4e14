package sources

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/queue"
	"github.com/vk-static/vk-static/internal/watchstore"
	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/podutil"
)

// APISource lists and watches the pods bound to one node — the field selector
// spec.nodeName=<node> is all the Node authorizer lets a node identity read. Mirror pods arrive
// like any other pod (they carry kubernetes.io/config.mirror).
//
// It sends a full snapshot after every (re)list — the first one, and any after the watch was
// lost, when deletions may have been missed — and otherwise partial snapshots holding only the
// pods that changed and the UIDs that are gone, so one change costs O(1) however many pods the
// node has (see Snapshot).
//
// Bursts are coalesced: the watch is never blocked by a slow consumer, and when the consumer is
// ready it gets every change since the last snapshot, each pod once in its newest version.
//
// Pods enter the watch store trimmed and stamped (see trimAPIPod): without managedFields, which
// nothing in the agent reads, and with kubernetes.io/config.source = "api", so the Merger emits
// the store's own objects instead of copying each one to stamp it.
type APISource struct {
	client   kubeclient.Interface
	nodeName string
}

// NewAPISource returns a source of the pods bound to nodeName.
func NewAPISource(client kubeclient.Interface, nodeName string) *APISource {
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
	// One key: the store keeps the changes, and the next TakeChanges includes all of them.
	dirty := queue.New[struct{}, struct{}](nil)
	markDirty := func() { dirty.Add(struct{}{}, struct{}{}) }
	// A watch store rather than an informer: it reconnects within seconds after an API server
	// outage (an informer may wait up to 30 s), so API pods converge quickly when it returns.
	pods := s.client.Pods(metav1.NamespaceAll)
	lw := watchstore.NewListWatch(s.client, selector, pods.List, pods.Watch)
	store := watchstore.New(lw, &corev1.Pod{}, markDirty, watchstore.TrackChanges(), watchstore.WithTransform(trimAPIPod))

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

	// The first snapshot is the synced list, even when empty: that makes the source seen.
	pending := newAPIChanges()
	first := store.TakeChanges()
	first.Relisted = true
	pending.apply(store, first)
	for {
		var sendC chan<- Snapshot
		if pending.ready() {
			sendC = out
		}
		select {
		case <-ctx.Done():
			return
		case sendC <- pending.snapshot():
			if pending.full {
				logger.V(4).Info("Sent a full snapshot", "pods", len(pending.pods))
			}
			pending.sent()
		case <-dirty.Ready():
			// Taken before the store's changes, so that a change the store records after
			// TakeChanges wakes this loop again.
			dirty.Take()
			pending.apply(store, store.TakeChanges())
		}
	}
}

// trimAPIPod is the watch store's transform for pods: it drops managedFields (about a fifth of a
// pod's memory, read by nothing in the agent) and stamps kubernetes.io/config.source = "api"
// (the kubelet marks every API pod so, mirror pods included). The object is the store's own,
// freshly decoded, so it is modified in place. A pod without annotations gets apiSourceOnly, and
// its low-cardinality values are shared with the other pods' (apiPodSharer).
func trimAPIPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	pod.ManagedFields = nil
	// Stamped before sharing, never after: once shared, the annotations map may be other pods'
	// (their annotations, or their labels with the same entries), and a write into it would
	// change theirs. A pod trimmed again finds it stamped already and writes nothing.
	switch {
	case len(pod.Annotations) == 0:
		pod.Annotations = apiSourceOnly
	case pod.Annotations[podutil.ConfigSourceAnnotationKey] != podutil.APIServerSource:
		pod.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.APIServerSource
	}
	apiPodValues.share(pod)
	return pod, nil
}

// apiSourceOnly is the annotations of every API pod that has none of its own, shared read-only
// instead of a ~340 B map per pod and per version the store holds (about 0.7 KB a pod at
// api-1k, docs/performance.md "Live heap per pod"). Pods are read-only past the store: what
// stamps more annotations (the merger's stamp) copies the map, and nothing else writes one.
var apiSourceOnly = map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}

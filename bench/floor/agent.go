package floor

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// DefaultWorkers is how many API writes the floor keeps in flight when Agent.Workers is 0.
const DefaultWorkers = 16

// Agent is the floor for one node. Set the fields, then call Run once.
type Agent struct {
	Client  kubernetes.Interface // with the node's identity
	Node    string
	Workers int         // writes in flight; 0 means DefaultWorkers
	Clock   clock.Clock // nil means the real clock
	// ManifestDir, when set, holds static pods: each manifest file that appears is read once
	// and its mirror pod created; the mirror is deleted when the file goes ([staticSource]).
	ManifestDir string

	ready atomic.Bool
}

// Ready reports whether the Node is registered and the pod informer has synced.
func (a *Agent) Ready() bool { return a.ready.Load() }

// job is one write: a pod's status patch or its final DELETE, or a static pod's mirror
// created or deleted.
type job struct {
	pod  *corev1.Pod
	kind jobKind
}

type jobKind int

const (
	patchStatus jobKind = iota
	deletePod
	createMirror
)

// Run registers the Node, starts the informer and writes until ctx is cancelled; it returns
// nil then, or the error that kept it from starting.
func (a *Agent) Run(ctx context.Context) error {
	clk := a.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	node, err := registerNode(ctx, a.Client, a.Node, metav1.NewTime(clk.Now()))
	if err != nil {
		return err
	}
	jobs := make(chan job, 1024)
	var wg sync.WaitGroup
	workers := a.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-jobs:
					a.write(ctx, clk, j)
				}
			}
		})
	}
	defer wg.Wait()

	factory := informers.NewSharedInformerFactoryWithOptions(a.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", a.Node).String()
	}))
	inf := factory.Core().V1().Pods().Informer()
	d := newDeduper()
	handle := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		if j, ok := d.next(pod); ok {
			select {
			case jobs <- j:
			case <-ctx.Done():
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				d.forget(pod.UID)
			}
		},
	}); err != nil {
		return fmt.Errorf("pod informer: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil // cancelled
	}
	if a.ManifestDir != "" {
		// Watched before Ready, so that no manifest written after Ready is missed.
		static, err := newStaticSource(a.ManifestDir, node)
		if err != nil {
			return err
		}
		defer static.close()
		wg.Go(func() { static.run(ctx, jobs) })
	}
	a.ready.Store(true)
	klog.FromContext(ctx).Info("floor ready", "node", a.Node, "workers", workers, "manifestDir", a.ManifestDir)
	<-ctx.Done()
	return nil
}

// write makes one API request for j; failures are logged, not retried: the floor is the
// least work, and the bench reports a pod that never got Running.
func (a *Agent) write(ctx context.Context, clk clock.Clock, j job) {
	pods := a.Client.CoreV1().Pods(j.pod.Namespace)
	var err error
	switch j.kind {
	case deletePod:
		opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
		if j.pod.UID != "" { // a mirror's UID is the API server's: the floor never learns it
			opts.Preconditions = &metav1.Preconditions{UID: &j.pod.UID}
		}
		err = pods.Delete(ctx, j.pod.Name, opts)
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			err = nil // gone already, or another pod of that name
		}
	case createMirror:
		_, err = pods.Create(ctx, j.pod, metav1.CreateOptions{})
	case patchStatus:
		var patch []byte
		if patch, err = statusPatch(j.pod, metav1.NewTime(clk.Now())); err == nil {
			_, err = pods.Patch(ctx, j.pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		}
	}
	if err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "write failed", "pod", klog.KObj(j.pod), "kind", j.kind)
	}
}

// deduper remembers which write each pod has had, so each pod gets at most one status patch
// and one DELETE however many events the informer delivers.
type deduper struct {
	mu      sync.Mutex
	patched map[types.UID]bool // true once the DELETE was sent too
}

func newDeduper() *deduper { return &deduper{patched: map[types.UID]bool{}} }

// next is the write pod needs now, if any.
func (d *deduper) next(pod *corev1.Pod) (job, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	deleted, seen := d.patched[pod.UID]
	switch {
	case pod.DeletionTimestamp != nil:
		if deleted {
			return job{}, false
		}
		d.patched[pod.UID] = true
		return job{pod: pod, kind: deletePod}, true
	case !seen && needsStatus(pod):
		d.patched[pod.UID] = false
		return job{pod: pod, kind: patchStatus}, true
	}
	return job{}, false
}

func (d *deduper) forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.patched, uid)
}

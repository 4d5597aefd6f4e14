package nodeobjects

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// ServiceWatch holds the cluster's Services from a watch of every namespace's Services, as the
// kubelet's service informer, for the pods' service environment variables (it is an
// env.Services): the Node authorizer lets a node list and watch them all. Run it (an agent
// component) for as long as pods start.
type ServiceWatch struct {
	informer cache.SharedIndexInformer
	lister   corelisters.ServiceLister
}

// NewServiceWatch watches the Services through client, with the node's identity. It starts
// nothing: Run does.
func NewServiceWatch(client kubernetes.Interface) *ServiceWatch {
	inf := v1.NewServiceInformer(client, metav1.NamespaceAll, 0, cache.Indexers{})
	return &ServiceWatch{informer: inf, lister: corelisters.NewServiceLister(inf.GetIndexer())}
}

// Run watches until ctx ends.
func (w *ServiceWatch) Run(ctx context.Context) error {
	w.informer.RunWithContext(ctx)
	return nil
}

// List returns the Services as last seen.
func (w *ServiceWatch) List() ([]*corev1.Service, error) { return w.lister.List(labels.Everything()) }

// HasSynced reports whether the first list has been read.
func (w *ServiceWatch) HasSynced() bool { return w.informer.HasSynced() }

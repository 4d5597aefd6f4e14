package nodeobjects

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vk-static/vk-static/internal/watchstore"
	"github.com/vk-static/vk-static/kubeclient"
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
// nothing: Run does. The informer is client-go's service informer's (informers/core/v1),
// built here because that package takes the full clientset.
func NewServiceWatch(client kubeclient.Interface) *ServiceWatch {
	services := client.Services(metav1.NamespaceAll)
	lw := watchstore.NewListWatch(client, "", services.List, services.Watch)
	inf := cache.NewSharedIndexInformerWithOptions(lw, &corev1.Service{}, cache.SharedIndexInformerOptions{
		Identifier: (*cache.InformerName)(nil).WithResource(corev1.SchemeGroupVersion.WithResource("services")),
	})
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

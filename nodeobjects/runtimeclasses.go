package nodeobjects

import (
	"context"

	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/kubeclient"
)

// RuntimeClassGetter reads RuntimeClasses (node.k8s.io/v1) with the node's identity: the Node
// authorizer lets a node get every one. A RuntimeClass that does not exist must be an error for
// which apierrors.IsNotFound is true: the pod's sandbox then fails, as the kubelet's does.
//
// Standalone there is none (nil): a kubelet without an API server has no RuntimeClass manager
// and runs every sandbox with the runtime's default handler.
type RuntimeClassGetter interface {
	GetRuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error)
}

// NewClientRuntimeClassGetter returns a RuntimeClassGetter that reads each RuntimeClass from
// the API server with a plain Get: no cache and no watch (the kubelet keeps an informer), as a
// sandbox is made once per pod and rarely again. The API server's NotFound is returned as is
// (runtimeclasses.node.k8s.io "NAME" not found; the kubelet's informer cache words it
// runtimeclass.node.k8s.io, which the lifecycle's event repeats).
func NewClientRuntimeClassGetter(c kubeclient.Interface) RuntimeClassGetter {
	return runtimeClassGetter{client: c}
}

type runtimeClassGetter struct {
	client kubeclient.Interface
}

func (g runtimeClassGetter) GetRuntimeClass(ctx context.Context, name string) (*nodev1.RuntimeClass, error) {
	return g.client.RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
}

package nodeobjects

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/kubeclient"
)

// ObjectGetter reads the API objects a pod's environment and volumes may reference, with the
// node's identity: the Node authorizer lets a node read the secrets and config maps of the pods
// bound to it. A missing object must be an error for which apierrors.IsNotFound is true, so that
// an optional reference to it is skipped.
//
// Static pods never reference them (the sources refuse such manifests), so their users take a
// nil ObjectGetter for them.
type ObjectGetter interface {
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// NewClientGetter returns an ObjectGetter that reads each object from the API server with a
// plain Get: no cache and no watch, as a container start is rare enough and must see the
// object as it is now. The API server's NotFound is returned as is.
func NewClientGetter(c kubeclient.Interface) ObjectGetter {
	return clientGetter{client: c}
}

type clientGetter struct {
	client kubeclient.Interface
}

func (g clientGetter) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return g.client.ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (g clientGetter) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return g.client.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

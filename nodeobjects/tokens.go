package nodeobjects

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/kubeclient"
)

// TokenRequester asks the API server for service account tokens with the node's identity
// (the TokenRequest API, as the kubelet's token manager does). The Node authorizer lets a
// node request a token only for a service account that a pod bound to it uses, bound to that
// pod.
type TokenRequester interface {
	// RequestToken creates a token for serviceAccount in namespace, bound to the pod.
	RequestToken(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// NewClientTokenRequester requests tokens through c (serviceaccounts/<name>/token).
func NewClientTokenRequester(c kubeclient.Interface) TokenRequester {
	return clientTokenRequester{client: c}
}

type clientTokenRequester struct {
	client kubeclient.Interface
}

func (r clientTokenRequester) RequestToken(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return r.client.ServiceAccounts(namespace).CreateToken(ctx, serviceAccount, req, metav1.CreateOptions{})
}

package nodecert

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/vk-static/vk-static/kubeclient"
)

// CSRClient is what nodecert asks of the API server: create a certificate signing request,
// read one back, and watch it until it is issued. The methods are client-go's typed client's
// (CertificatesV1().CertificateSigningRequests()), so that it, its fake and kubeclient's all
// satisfy this without an adapter, and nodecert links no clientset.
type CSRClient interface {
	Create(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, opts metav1.CreateOptions) (*certificatesv1.CertificateSigningRequest, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*certificatesv1.CertificateSigningRequest, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// newCSRClient is a CSRClient of cfg (the bootstrap kubeconfig's, or the node's with its
// newest certificate), made for each request as client-go's manager makes a clientset: the
// credentials may have changed since the last.
func newCSRClient(cfg *rest.Config) (CSRClient, error) {
	c, err := kubeclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return c.CertificateSigningRequests(), nil
}

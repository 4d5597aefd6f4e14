package kubeclient

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// Interface is the agent's API client: one accessor per resource it uses.
type Interface interface {
	Pods(namespace string) PodInterface
	Nodes() NodeInterface
	Leases(namespace string) LeaseInterface
	Events(namespace string) EventInterface
	ConfigMaps(namespace string) ConfigMapInterface
	Secrets(namespace string) SecretInterface
	Services(namespace string) ServiceInterface
	ServiceAccounts(namespace string) ServiceAccountInterface
	TokenReviews() TokenReviewInterface
	SubjectAccessReviews() SubjectAccessReviewInterface
	CertificateSigningRequests() CertificateSigningRequestInterface
	RuntimeClasses() RuntimeClassInterface

	// CoreRESTClient is the REST client of the core/v1 group, for requests the typed clients
	// cannot make as cheaply (a status patch whose answer is dropped unread). A client that has
	// none (one wrapping client-go's fake) returns a nil *rest.RESTClient or another
	// rest.Interface.
	CoreRESTClient() rest.Interface
}

// Resource is the method set of client-go's typed clients for a listable resource without a
// status subresource (gentype's ClientWithList), without Apply: apply configurations are a
// large part of what the full clientset links, and the agent applies nothing.
type Resource[T, L any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// ResourceWithStatus is Resource for a resource with a status subresource.
type ResourceWithStatus[T, L any] interface {
	Resource[T, L]
	UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// The resource interfaces: subsets of client-go's of the same names.
type (
	PodInterface       = ResourceWithStatus[*corev1.Pod, *corev1.PodList]
	NodeInterface      = ResourceWithStatus[*corev1.Node, *corev1.NodeList]
	ServiceInterface   = ResourceWithStatus[*corev1.Service, *corev1.ServiceList]
	LeaseInterface     = Resource[*coordinationv1.Lease, *coordinationv1.LeaseList]
	EventInterface     = Resource[*corev1.Event, *corev1.EventList]
	ConfigMapInterface = Resource[*corev1.ConfigMap, *corev1.ConfigMapList]
	SecretInterface    = Resource[*corev1.Secret, *corev1.SecretList]

	// RuntimeClassInterface reads RuntimeClasses (node.k8s.io/v1), whose handler a pod's
	// sandbox is run with; the Node authorizer lets a node get, list and watch them.
	RuntimeClassInterface = Resource[*nodev1.RuntimeClass, *nodev1.RuntimeClassList]

	CertificateSigningRequestInterface = ResourceWithStatus[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList]
)

// ServiceAccountInterface adds the token subresource, which projected service account tokens
// are requested through.
type ServiceAccountInterface interface {
	Resource[*corev1.ServiceAccount, *corev1.ServiceAccountList]
	CreateToken(ctx context.Context, serviceAccountName string, tokenRequest *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error)
}

// TokenReviewInterface creates token reviews (the only verb the API serves for them), for the
// kubelet API's webhook authentication.
type TokenReviewInterface interface {
	Create(ctx context.Context, tokenReview *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// SubjectAccessReviewInterface creates subject access reviews, for the kubelet API's webhook
// authorization.
type SubjectAccessReviewInterface interface {
	Create(ctx context.Context, subjectAccessReview *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

package kubeclient

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// New returns a client for the API server config points at. As client-go's
// kubernetes.NewForConfig: one transport and one rate limiter (config's QPS and Burst) shared
// by every group, client-go's default user agent unless config has one, and protobuf for what
// the API serves in protobuf unless config.ContentType says otherwise. Unlike client-go's, its
// watches deliver pods without metadata.managedFields ([stripWatchedPods]).
func New(config *rest.Config) (Interface, error) {
	c := *config
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient, err := rest.HTTPClientFor(&c)
	if err != nil {
		return nil, err
	}
	if c.RateLimiter == nil && c.QPS > 0 {
		if c.Burst <= 0 {
			return nil, fmt.Errorf("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")
		}
		c.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(c.QPS, c.Burst)
	}
	cs := &clientset{codecs: newCodecs()}
	for _, g := range []struct {
		client  *rest.Interface
		gv      schema.GroupVersion
		apiPath string
	}{
		{&cs.core, corev1.SchemeGroupVersion, "/api"},
		{&cs.coordination, coordinationv1.SchemeGroupVersion, "/apis"},
		{&cs.authentication, authenticationv1.SchemeGroupVersion, "/apis"},
		{&cs.authorization, authorizationv1.SchemeGroupVersion, "/apis"},
		{&cs.certificates, certificatesv1.SchemeGroupVersion, "/apis"},
		{&cs.node, nodev1.SchemeGroupVersion, "/apis"},
	} {
		gc := c
		gc.GroupVersion = &g.gv
		gc.APIPath = g.apiPath
		// Watched pods come without managedFields ([stripWatchedPods]).
		gc.NegotiatedSerializer = stripWatchedPods(rest.CodecFactoryForGeneratedClient(cs.scheme, cs.serializer).WithoutConversion())
		rc, err := rest.RESTClientForConfigAndClient(&gc, httpClient)
		if err != nil {
			return nil, err
		}
		*g.client = rc
	}
	return cs, nil
}

// clientset is New's Interface: a REST client per group and the typed clients over them.
type clientset struct {
	codecs
	core, coordination, authentication, authorization, certificates, node rest.Interface
}

var _ Interface = (*clientset)(nil)

func (c *clientset) CoreRESTClient() rest.Interface { return c.core }

func (c *clientset) Pods(namespace string) PodInterface {
	return newResource(c, c.core, "pods", namespace, func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} })
}

func (c *clientset) Nodes() NodeInterface {
	return newResource(c, c.core, "nodes", "", func() *corev1.Node { return &corev1.Node{} }, func() *corev1.NodeList { return &corev1.NodeList{} })
}

func (c *clientset) Leases(namespace string) LeaseInterface {
	return newResource(c, c.coordination, "leases", namespace,
		func() *coordinationv1.Lease { return &coordinationv1.Lease{} }, func() *coordinationv1.LeaseList { return &coordinationv1.LeaseList{} })
}

func (c *clientset) Events(namespace string) EventInterface {
	return newResource(c, c.core, "events", namespace, func() *corev1.Event { return &corev1.Event{} }, func() *corev1.EventList { return &corev1.EventList{} })
}

func (c *clientset) ConfigMaps(namespace string) ConfigMapInterface {
	return newResource(c, c.core, "configmaps", namespace,
		func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, func() *corev1.ConfigMapList { return &corev1.ConfigMapList{} })
}

func (c *clientset) Secrets(namespace string) SecretInterface {
	return newResource(c, c.core, "secrets", namespace, func() *corev1.Secret { return &corev1.Secret{} }, func() *corev1.SecretList { return &corev1.SecretList{} })
}

func (c *clientset) Services(namespace string) ServiceInterface {
	return newResource(c, c.core, "services", namespace, func() *corev1.Service { return &corev1.Service{} }, func() *corev1.ServiceList { return &corev1.ServiceList{} })
}

func (c *clientset) ServiceAccounts(namespace string) ServiceAccountInterface {
	return serviceAccounts{newResource(c, c.core, "serviceaccounts", namespace,
		func() *corev1.ServiceAccount { return &corev1.ServiceAccount{} }, func() *corev1.ServiceAccountList { return &corev1.ServiceAccountList{} }),
		c.parameters}
}

func (c *clientset) CertificateSigningRequests() CertificateSigningRequestInterface {
	return newResource(c, c.certificates, "certificatesigningrequests", "",
		func() *certificatesv1.CertificateSigningRequest { return &certificatesv1.CertificateSigningRequest{} },
		func() *certificatesv1.CertificateSigningRequestList {
			return &certificatesv1.CertificateSigningRequestList{}
		})
}

func (c *clientset) RuntimeClasses() RuntimeClassInterface {
	return newResource(c, c.node, "runtimeclasses", "",
		func() *nodev1.RuntimeClass { return &nodev1.RuntimeClass{} }, func() *nodev1.RuntimeClassList { return &nodev1.RuntimeClassList{} })
}

func (c *clientset) TokenReviews() TokenReviewInterface {
	return gentype.NewClient("tokenreviews", c.authentication, c.parameters, "",
		func() *authenticationv1.TokenReview { return &authenticationv1.TokenReview{} },
		gentype.PrefersProtobuf[*authenticationv1.TokenReview]())
}

func (c *clientset) SubjectAccessReviews() SubjectAccessReviewInterface {
	return gentype.NewClient("subjectaccessreviews", c.authorization, c.parameters, "",
		func() *authorizationv1.SubjectAccessReview { return &authorizationv1.SubjectAccessReview{} },
		gentype.PrefersProtobuf[*authorizationv1.SubjectAccessReview]())
}

// newResource is client-go's generated constructor for a built-in resource: gentype's client
// with lists, preferring protobuf as client-go does for every built-in type.
func newResource[T interface {
	runtime.Object
	metav1.Object
}, L runtime.Object](c *clientset, rc rest.Interface, resource, namespace string, newObject func() T, newList func() L) *gentype.ClientWithList[T, L] {
	return gentype.NewClientWithList(resource, rc, c.parameters, namespace, newObject, newList, gentype.PrefersProtobuf[T]())
}

// serviceAccounts adds CreateToken, as client-go's generated serviceAccounts does.
type serviceAccounts struct {
	*gentype.ClientWithList[*corev1.ServiceAccount, *corev1.ServiceAccountList]
	parameters runtime.ParameterCodec
}

func (c serviceAccounts) CreateToken(ctx context.Context, serviceAccountName string, tokenRequest *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error) {
	result := &authenticationv1.TokenRequest{}
	err := c.GetClient().Post().
		UseProtobufAsDefault().
		Namespace(c.GetNamespace()).
		Resource("serviceaccounts").
		Name(serviceAccountName).
		SubResource("token").
		VersionedParams(&opts, c.parameters).
		Body(tokenRequest).
		Do(ctx).
		Into(result)
	return result, err
}

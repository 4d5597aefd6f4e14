package kubeclienttest

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/watchlist"

	"github.com/vk-static/vk-static/kubeclient"
)

// Wrap returns cs as a kubeclient.Interface. Its typed clients are cs's own, so a fake's
// reactors and object tracker see every call. It tells client-go's reflector what cs does
// (IsWatchListSemanticsUnSupported): the fake cannot stream the initial list as a watch.
func Wrap(cs kubernetes.Interface) kubeclient.Interface { return wrapped{cs} }

type wrapped struct{ cs kubernetes.Interface }

func (w wrapped) Pods(namespace string) kubeclient.PodInterface { return w.cs.CoreV1().Pods(namespace) }
func (w wrapped) Nodes() kubeclient.NodeInterface               { return w.cs.CoreV1().Nodes() }
func (w wrapped) Leases(namespace string) kubeclient.LeaseInterface {
	return w.cs.CoordinationV1().Leases(namespace)
}
func (w wrapped) Events(namespace string) kubeclient.EventInterface {
	return w.cs.CoreV1().Events(namespace)
}
func (w wrapped) ConfigMaps(namespace string) kubeclient.ConfigMapInterface {
	return w.cs.CoreV1().ConfigMaps(namespace)
}
func (w wrapped) Secrets(namespace string) kubeclient.SecretInterface {
	return w.cs.CoreV1().Secrets(namespace)
}
func (w wrapped) Services(namespace string) kubeclient.ServiceInterface {
	return w.cs.CoreV1().Services(namespace)
}
func (w wrapped) ServiceAccounts(namespace string) kubeclient.ServiceAccountInterface {
	return w.cs.CoreV1().ServiceAccounts(namespace)
}
func (w wrapped) TokenReviews() kubeclient.TokenReviewInterface {
	return w.cs.AuthenticationV1().TokenReviews()
}
func (w wrapped) SubjectAccessReviews() kubeclient.SubjectAccessReviewInterface {
	return w.cs.AuthorizationV1().SubjectAccessReviews()
}
func (w wrapped) CertificateSigningRequests() kubeclient.CertificateSigningRequestInterface {
	return w.cs.CertificatesV1().CertificateSigningRequests()
}
func (w wrapped) RuntimeClasses() kubeclient.RuntimeClassInterface {
	return w.cs.NodeV1().RuntimeClasses()
}
func (w wrapped) CoreRESTClient() rest.Interface { return w.cs.CoreV1().RESTClient() }

// IsWatchListSemanticsUnSupported forwards cs's answer (client-go's fake says true).
func (w wrapped) IsWatchListSemanticsUnSupported() bool {
	return watchlist.DoesClientNotSupportWatchListSemantics(w.cs)
}

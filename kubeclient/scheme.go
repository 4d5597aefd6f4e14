package kubeclient

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// codecs holds the scheme of the groups this package serves and what encodes and decodes
// with it. It is built once per New, not at package init, so that the package keeps no state
// of its own; a scheme is a few dozen types, built in microseconds.
type codecs struct {
	scheme     *runtime.Scheme
	serializer serializer.CodecFactory
	parameters runtime.ParameterCodec
}

func newCodecs() codecs {
	s := NewScheme()
	return codecs{scheme: s, serializer: serializer.NewCodecFactory(s), parameters: runtime.NewParameterCodec(s)}
}

// NewScheme returns a scheme holding the API groups this package's clients use (core/v1,
// coordination/v1, authentication/v1, authorization/v1, certificates/v1, node/v1) and the
// unversioned meta/v1 options, as client-go's kubernetes/scheme does for every group. It is
// what an event's object reference is resolved with (reference.GetReference) in place of
// client-go's.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		coordinationv1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
		certificatesv1.AddToScheme,
		nodev1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

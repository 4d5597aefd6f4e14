package localcopy

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

// refused is what a client gets from an API server that is not there.
var refused = &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/namespaces/shop/configmaps/cfg",
	Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}

// fakeAPI is the API server as the getters see it: its objects, or err for every call.
type fakeAPI struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	token      *authenticationv1.TokenRequest
	runtimes   map[string]*nodev1.RuntimeClass
	err        error
	calls      int
}

func (f *fakeAPI) GetConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if cm, ok := f.configMaps[namespace+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeAPI) GetSecret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if s, ok := f.secrets[namespace+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f *fakeAPI) GetRuntimeClass(_ context.Context, name string) (*nodev1.RuntimeClass, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if rc, ok := f.runtimes[name]; ok {
		return rc.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(nodev1.Resource("runtimeclasses"), name)
}

func (f *fakeAPI) RequestToken(_ context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	if f.token == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, serviceAccount)
	}
	out := req.DeepCopy()
	out.Status = f.token.Status
	return out, nil
}

func configMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}, Data: map[string]string{"k": value}}
}

// newStore is a Store over api with pod "shop/web" recorded (its directory made, as the
// lifecycle makes it with the pod's record).
func newStore(t *testing.T, api *fakeAPI) (*Store, *corev1.Pod, *clocktesting.FakeClock) {
	t.Helper()
	dir := t.TempDir()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"}}
	require.NoError(t, os.Mkdir(filepath.Join(dir, string(pod.UID)), 0o750))
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return New(Config{PodsDir: dir, Objects: api, Tokens: api, RuntimeClasses: api, Clock: clk}), pod, clk
}

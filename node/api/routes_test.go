package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/provider/mock"
)

// routeEnv serves Routes over plain HTTP (no authentication: that is the Server's, tested on
// its own) with the mock provider and a pod manager the test fills.
type routeEnv struct {
	provider provider.PodLifecycleHandler
	mock     *mock.Provider
	clock    *clocktesting.FakeClock
	pods     podmanager.Manager
	srv      *httptest.Server
}

var routeEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newRouteEnv(t *testing.T) *routeEnv {
	t.Helper()
	t.Cleanup(func() { verifyNoLeaks(t) })
	fc := clocktesting.NewFakeClock(routeEpoch)
	p, err := mock.New(mock.Config{NodeName: "node-a", InternalIP: "10.1.2.3", Clock: fc})
	require.NoError(t, err)
	// The mock's transitions (a job ending) run on its background loop, which NotifyPods starts.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p.NotifyPods(ctx, func(*corev1.Pod) {})
	e := &routeEnv{provider: p, mock: p, clock: fc, pods: podmanager.NewBasicPodManager()}
	e.serve(t)
	return e
}

// serve (re)starts the server with the current provider.
func (e *routeEnv) serve(t *testing.T) {
	t.Helper()
	if e.srv != nil {
		e.srv.Close()
	}
	mux := http.NewServeMux()
	Routes{Pods: e.pods, Provider: e.provider}.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
}

// get returns the status and body of a GET of path.
func (e *routeEnv) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := e.srv.Client().Get(e.srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// run binds pod here (pod manager) and starts it (provider), as the pod controller would.
func (e *routeEnv) run(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	e.pods.AddPod(pod)
	require.NoError(t, e.provider.CreatePod(context.Background(), pod.DeepCopy()))
}

func testPod(namespace, name string, uid types.UID, source string, containers ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid,
			Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: source}},
		Spec: corev1.PodSpec{NodeName: "node-a"},
	}
	if source != podutil.APIServerSource {
		p.Annotations[podutil.ConfigHashAnnotationKey] = string(uid)
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "img-" + c})
	}
	return p
}

// mirrorOf is the API server's mirror of the static pod p.
func mirrorOf(p *corev1.Pod, uid types.UID) *corev1.Pod {
	m := p.DeepCopy()
	m.UID = uid
	m.Annotations[podutil.ConfigMirrorAnnotationKey] = p.Annotations[podutil.ConfigHashAnnotationKey]
	m.Annotations[podutil.ConfigSourceAnnotationKey] = podutil.APIServerSource
	m.Status = corev1.PodStatus{Phase: corev1.PodPending, Message: "as the API server last saw it"}
	return m
}

// bareProvider runs pods and has none of the optional capabilities.
type bareProvider struct{ provider.PodLifecycleHandler }

// expectPosts POSTs each path (no stream opened) and checks the status it is answered.
func (e *routeEnv) expectPosts(t *testing.T, want map[string]int) {
	t.Helper()
	for path, status := range want {
		resp, err := e.srv.Client().Post(e.srv.URL+path, "", nil)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, status, resp.StatusCode, path)
	}
}

// expectNotImplemented serves a provider with no capabilities and checks that path answers 501
// naming capability.
func (e *routeEnv) expectNotImplemented(t *testing.T, path, capability string) {
	t.Helper()
	e.provider = bareProvider{e.provider}
	e.serve(t)
	code, body := e.get(t, path)
	assert.Equal(t, http.StatusNotImplemented, code, body)
	assert.Contains(t, body, capability)
}

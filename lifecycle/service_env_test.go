package lifecycle

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeServices is env.Services over a slice, synced once told.
type fakeServices struct {
	synced   atomic.Bool
	services []*corev1.Service
}

func (f *fakeServices) List() ([]*corev1.Service, error) { return f.services, nil }
func (f *fakeServices) HasSynced() bool                  { return f.synced.Load() }

// newServicesHarness is newHarness with services for the service environment variables.
func newServicesHarness(t *testing.T, services *fakeServices) *harness {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = h.rt
	p, err := New(context.Background(), Config{Runtime: h.rt, RuntimeName: "fake", RootDir: h.root, NodeIPs: []string{"127.0.0.1"},
		Clock: h.clock, Recorder: h.events, Services: services})
	require.NoError(t, err)
	h.p, h.reported = p, map[types.UID]*corev1.Pod{}
	p.NotifyPods(context.Background(), func(pod *corev1.Pod) {
		h.mu.Lock()
		h.reported[pod.UID] = pod
		h.mu.Unlock()
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		assert.NoError(t, p.Run(ctx))
	}()
	t.Cleanup(h.stop)
	return h
}

func TestServiceEnvironmentVariables(t *testing.T) {
	port := []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}
	services := &fakeServices{services: []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: port}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.3", Ports: port}},
	}}
	h := newServicesHarness(t, services)

	// An API pod waits for the Services to be read once, as the kubelet's.
	pod := testPod("sv", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "waiting for the services", func(s *corev1.PodStatus) bool {
		w := mainState(s, 0).Waiting
		return w != nil && w.Reason == "CreateContainerConfigError" &&
			w.Message == "services have not yet been read at least once, cannot construct envvars"
	})
	services.synced.Store(true)
	h.step(retryAfter)
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	env := h.rt.config("app").Env
	assert.Contains(t, env, "KUBERNETES_SERVICE_HOST=10.0.0.1")
	assert.Contains(t, env, "KUBERNETES_PORT_443_TCP=tcp://10.0.0.1:443")
	assert.Contains(t, env, "WEB_SERVICE_HOST=10.0.0.3", "a service of the pod's namespace")

	// enableServiceLinks: false leaves only the master service's.
	unlinked := testPod("sv2", corev1.RestartPolicyAlways, ctr("quiet", "sleep", "1000"))
	unlinked.Spec.EnableServiceLinks = ptr.To(false)
	require.NoError(t, h.p.CreatePod(context.Background(), unlinked))
	h.eventually(unlinked.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	env = h.rt.config("quiet").Env
	assert.Contains(t, env, "KUBERNETES_SERVICE_HOST=10.0.0.1")
	assert.False(t, slices.ContainsFunc(env, func(e string) bool { return len(e) > 4 && e[:4] == "WEB_" }), "%v", env)
}

// A static pod does not wait for the API server's Services.
func TestStaticPodsDoNotWaitForServices(t *testing.T) {
	h := newServicesHarness(t, &fakeServices{})
	pod := testPod("st", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	pod.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
}

package lifecycle

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// outageAPI is the node's getters over an API server that can be cut off: while down, every
// call fails as a call to an API server that is not there does.
type outageAPI struct {
	mu    sync.Mutex
	down  bool
	cm    string // the config map cfg's greeting
	clock *clocktesting.FakeClock
}

var errRefused = &url.Error{Op: "Get", URL: "https://127.0.0.1:6443", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}

func (a *outageAPI) set(down bool, greeting string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.down, a.cm = down, greeting
}

func (a *outageAPI) GetConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down {
		return nil, errRefused
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string]string{"greeting": a.cm}}, nil
}

func (a *outageAPI) GetSecret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down {
		return nil, errRefused
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{"password": []byte("s3cret")}}, nil
}

func (a *outageAPI) RequestToken(_ context.Context, _, _ string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.down {
		return nil, errRefused
	}
	out := req.DeepCopy()
	out.Status = authenticationv1.TokenRequestStatus{Token: "issued", ExpirationTimestamp: metav1.NewTime(a.clock.Now().Add(time.Hour))}
	return out, nil
}

// outagePod is an API pod built from a config map (env and volume), a secret (volume), a
// projected token and the Services of its namespace.
func outagePod() *corev1.Pod {
	pod := testPod("u-outage", corev1.RestartPolicyAlways, ctr("app", "serve"))
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "greeting"}}}}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
		{Name: "tok", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3600)}}}}}},
	}
	return pod
}

// outageHarness runs the lifecycle over api, with a Service watch that has listed the
// Services; restartDuringOutage gives the next start a watch that has not (the API server
// cannot be reached).
func outageHarness(t *testing.T, api *outageAPI, stopPodsOnExit bool) (*harness, func()) {
	h := &harness{t: t, clock: api.clock, root: t.TempDir(), events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.runtime = h.rt
	services := &fakeServices{services: []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{Port: 443}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "backend"}, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.7", Ports: []corev1.ServicePort{{Port: 80}}}},
	}}
	services.synced.Store(true)
	h.configure = func(cfg *Config) {
		cfg.Objects, cfg.Tokens, cfg.Services, cfg.StopPodsOnExit = api, api, services, stopPodsOnExit
	}
	h.start()
	restartDuringOutage := func() {
		api.set(true, "bye") // the config map changes while the node cannot see it
		h.stop()
		services = &fakeServices{} // a new agent's watch, which cannot list them
		h.clock.Step(time.Minute)
		h.start()
	}
	return h, restartDuringOutage
}

// volumeFile reads file of the pod's volume (plugin, name).
func (h *harness) volumeFile(pod *corev1.Pod, plugin, name, file string) string {
	b, err := os.ReadFile(filepath.Join(h.root, "pods", string(pod.UID), "volumes", plugin, name, file))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// checkData checks that container app's newest instance and the pod's volumes have the data the
// pod had before the outage, greeting the config map's value in its volume.
func (h *harness) checkData(pod *corev1.Pod, greeting string) {
	h.t.Helper()
	env := h.rt.config("app").Env
	for _, want := range []string{"GREETING=hello", "KUBERNETES_SERVICE_HOST=10.0.0.1", "BACKEND_SERVICE_HOST=10.0.0.7"} {
		assert.Contains(h.t, env, want)
	}
	assert.Equal(h.t, greeting, h.volumeFile(pod, "kubernetes.io~configmap", "cfg", "greeting"))
	assert.Equal(h.t, "s3cret", h.volumeFile(pod, "kubernetes.io~secret", "sec", "password"))
	assert.Equal(h.t, "issued", h.volumeFile(pod, "kubernetes.io~projected", "tok", "token"))
}

// After a reboot during an outage (the agent stopped every container as it stopped, and starts
// again with no API server to reach), an API pod runs again with the config map, secret, token
// and Services it had, from the node's copy. When the API server answers again: its volume
// follows the config map, its environment does not, and nothing is restarted again.
func TestAPIPodRunsAgainAfterARebootDuringAnOutage(t *testing.T) {
	api := &outageAPI{cm: "hello", clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))}
	h, restartDuringOutage := outageHarness(t, api, true)
	pod := outagePod()
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	t.Cleanup(func() {
		h.stop()
		assert.NoError(t, h.p.volumes.Teardown(context.Background(), pod.UID))
	})
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	h.checkData(pod, "hello")

	restartDuringOutage()
	h.eventually(pod.UID, "running again during the outage", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Running != nil && s.ContainerStatuses[0].RestartCount == 1
	})
	h.checkData(pod, "hello")

	api.set(false, "bye")
	h.step(DefaultVolumeRefresh)
	require.Eventually(t, func() bool { return h.volumeFile(pod, "kubernetes.io~configmap", "cfg", "greeting") == "bye" },
		10*time.Second, 5*time.Millisecond, "the volume follows the config map once the API server answers")
	h.checkData(pod, "bye") // the environment stays as it was
	s := h.status(pod.UID)
	assert.Equal(t, int32(1), s.ContainerStatuses[0].RestartCount)
	assert.NotNil(t, mainState(s, 0).Running)
	assert.Equal(t, []string{"start app#0", "stop app#0 grace=12s", "start app#1"}, startsAndStops(h.rt.calls()),
		"started again once, by the reboot, and never after")
}

// The same with the agent killed during the outage: its containers run on and are taken up as
// they are; one that then exits is started again with the data the pod had.
func TestAPIPodRunsOnAfterTheAgentIsKilledDuringAnOutage(t *testing.T) {
	api := &outageAPI{cm: "hello", clock: clocktesting.NewFakeClock(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))}
	h, restartDuringOutage := outageHarness(t, api, false)
	pod := outagePod()
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	t.Cleanup(func() {
		h.stop()
		assert.NoError(t, h.p.volumes.Teardown(context.Background(), pod.UID))
	})
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	first := h.rt.running("app")

	restartDuringOutage()
	h.eventually(pod.UID, "taken up", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	assert.Equal(t, first, h.rt.running("app"), "the container that survived is left alone")
	h.rt.exit(first, 1)
	h.eventually(pod.UID, "started again during the outage", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Running != nil && s.ContainerStatuses[0].RestartCount == 1
	})
	h.checkData(pod, "hello")
	assert.Equal(t, []string{"start app#0", "start app#1"}, startsAndStops(h.rt.calls()))
}

// startsAndStops are the container starts and stops among the runtime's calls.
func startsAndStops(calls []string) []string {
	return slices.DeleteFunc(slices.Clone(calls), func(c string) bool {
		return !slices.ContainsFunc([]string{"start ", "stop "}, func(p string) bool { return len(c) > len(p) && c[:len(p)] == p })
	})
}

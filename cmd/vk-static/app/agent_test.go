package app

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient/kubeclienttest"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// registeredNode runs the agent the arguments describe, with a fake API server, until it has
// registered its Node, and returns that Node.
func registeredNode(t *testing.T, args ...string) *corev1.Node {
	t.Helper()
	// A kubeconfig the agent never uses (the fake clientset replaces its client): with one, the
	// agent is not standalone.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, testenv.WriteKubeconfig(kubeconfig, &rest.Config{Host: "https://127.0.0.1:1"}))
	o, err := parse(t, append([]string{"--hostname-override", "node-a", "--kubeconfig", kubeconfig, "--root-dir", t.TempDir()}, args...)...)
	require.NoError(t, err)
	cfg, _, err := agentConfig(context.Background(), o, prometheus.NewRegistry())
	require.NoError(t, err)
	client := fake.NewClientset()
	cfg.Client = kubeclienttest.Wrap(client)
	cfg.EventClient, cfg.HeartbeatClient, cfg.ReviewClient = cfg.Client, cfg.Client, cfg.Client
	a, err := agent.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-a.Done()
		assert.NoError(t, a.Err())
	}()
	go func() { _ = a.Run(ctx) }()
	var registered *corev1.Node
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		registered, err = client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		assert.NoError(c, err)
	}, 10*time.Second, 10*time.Millisecond, "node registered")
	return registered
}

// The Node the agent registers with the mock provider carries the mock's NoSchedule taint
// (so nothing is scheduled onto a simulator) besides --register-with-taints, and advertises the
// kubelet API's --port.
func TestRegisteredNode(t *testing.T) {
	port, err := testenv.FreePort()
	require.NoError(t, err)
	registered := registeredNode(t, "--provider", "mock", "--register-with-taints", "dedicated=edge:NoSchedule", "--address", "127.0.0.1", "--port", strconv.Itoa(port))

	want := []corev1.Taint{
		{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule},
		{Key: "virtual-kubelet.io/provider", Value: "mock", Effect: corev1.TaintEffectNoSchedule},
	}
	if got := registered.Spec.Taints; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("taints %+v, want %+v", got, want)
	}
	assert.Equal(t, int32(port), registered.Status.DaemonEndpoints.KubeletEndpoint.Port) //nolint:gosec // a port
}

// With the process provider (the default) the Node has the machine's capacity, and allocatable
// is that minus --system-reserved and --kube-reserved; no taint keeps workloads off.
func TestProcessProviderNodeHasTheMachinesCapacity(t *testing.T) {
	// Its pods' cgroups under the test's own, not at the hierarchy's root (the default); no
	// kubelet API, whose default port another agent on the machine may hold.
	registered := registeredNode(t, "--port", "0", "--system-reserved", "cpu=100m,memory=100Mi", "--kube-reserved", "memory=28Mi", "--max-pods", "20", "--cgroup-root", cgrouptest.Root(t))
	capacity, allocatable := registered.Status.Capacity, registered.Status.Allocatable
	assert.Equal(t, int64(runtime.NumCPU()), capacity.Cpu().Value())
	assert.Equal(t, int64(20), capacity.Pods().Value())
	assert.Equal(t, capacity.Cpu().MilliValue()-100, allocatable.Cpu().MilliValue())
	// As the kubelet's: the reservations, and what the default hard eviction thresholds keep
	// back (memory.available<100Mi, nodefs.available<10%, taken as a float32 fraction).
	assert.Equal(t, capacity.Memory().Value()-128<<20-100<<20, allocatable.Memory().Value())
	assert.Positive(t, capacity.StorageEphemeral().Value())
	disk := capacity.StorageEphemeral().Value()
	assert.Equal(t, disk-int64(float64(disk)*float64(float32(0.1))), allocatable.StorageEphemeral().Value())
	assert.Empty(t, registered.Spec.Taints)
}

// --port 0 serves no kubelet API, so the Node advertises none.
func TestNoKubeletAPI(t *testing.T) {
	registered := registeredNode(t, "--port", "0")
	assert.Equal(t, int32(0), registered.Status.DaemonEndpoints.KubeletEndpoint.Port)
}

// The start-up line names the mode, the provider and the kubelet API's address.
func TestStartupValues(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, testenv.WriteKubeconfig(kubeconfig, &rest.Config{Host: "https://10.0.0.1:6443"}))
	values := func(args ...string) map[string]any {
		o, err := parse(t, args...)
		require.NoError(t, err)
		kv := startupValues(o)
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	got := values("--kubeconfig", kubeconfig, "--provider", "mock")
	assert.Equal(t, "API server https://10.0.0.1:6443", got["mode"])
	assert.Equal(t, "mock", got["provider"])
	assert.Equal(t, "https://0.0.0.0:10250", got["kubeletAPI"])
	assert.NotEmpty(t, got["version"])

	got = values("--anonymous-auth", "--authorization-mode", "AlwaysAllow", "--port", "10255")
	assert.Equal(t, "standalone", got["mode"])
	assert.Equal(t, "https://127.0.0.1:10255", got["kubeletAPI"])
	assert.Contains(t, got["provider"], "process")

	assert.Equal(t, "none: --port is 0", values("--port", "0")["kubeletAPI"])
}

package lifecycle

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// gatedSandboxes is a fakeRuntime whose RunSandbox waits until open is closed, as a CNI plugin
// still setting up the pod's network does, and keeps every sandbox config it was given.
type gatedSandboxes struct {
	*fakeRuntime
	open    chan struct{}
	gmu     sync.Mutex
	configs []*SandboxConfig
}

func (g *gatedSandboxes) RunSandbox(ctx context.Context, cfg *SandboxConfig) (string, error) {
	g.gmu.Lock()
	g.configs = append(g.configs, cfg)
	g.gmu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return g.fakeRuntime.RunSandbox(ctx, cfg)
}

func (g *gatedSandboxes) sandboxConfigs() []*SandboxConfig {
	g.gmu.Lock()
	defer g.gmu.Unlock()
	return append([]*SandboxConfig(nil), g.configs...)
}

// newPodNetworkHarness runs the provider on a runtime that gives pod-network sandboxes podIP
// once open is closed; the node's address is 127.0.0.1.
func newPodNetworkHarness(t *testing.T, podIP string) (*harness, *gatedSandboxes) {
	h := &harness{t: t, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)), root: t.TempDir(),
		events: record.NewFakeRecorder(1000)}
	h.rt = newFakeRuntime(h.clock)
	h.rt.podIP = podIP
	g := &gatedSandboxes{fakeRuntime: h.rt, open: make(chan struct{})}
	h.runtime = g
	h.start()
	return h, g
}

// TestPodNetworkPodHasNoAddressUntilItsSandboxHasOne: the kubelet's rule. Reporting the node's
// address meanwhile made the API server hold both (a strategic merge of podIPs) and refuse
// every later status write: "may specify no more than one IP for each IP family".
func TestPodNetworkPodHasNoAddressUntilItsSandboxHasOne(t *testing.T) {
	h, g := newPodNetworkHarness(t, "10.88.0.7")
	c := ctr("main", "sleep", "1000")
	c.Env = []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "POD_IPS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIPs"}}},
		{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
	}
	pod := testPod("net1", corev1.RestartPolicyAlways, c)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "reported while its sandbox is being made", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodPending })
	require.Eventually(t, func() bool { return len(g.sandboxConfigs()) == 1 }, 5*time.Second, time.Millisecond)
	s := h.status(pod.UID)
	assert.Empty(t, s.PodIP, "no address before the sandbox has one")
	assert.Empty(t, s.PodIPs)
	assert.Equal(t, "127.0.0.1", s.HostIP)

	close(g.open)
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	s = h.status(pod.UID)
	assert.Equal(t, "10.88.0.7", s.PodIP)
	assert.Equal(t, []corev1.PodIP{{IP: "10.88.0.7"}}, s.PodIPs, "the sandbox's address only")
	assert.Equal(t, []corev1.HostIP{{IP: "127.0.0.1"}}, s.HostIPs)
	env := h.rt.config("main").Env
	assert.Contains(t, env, "POD_IP=10.88.0.7", "the downward API gives the sandbox's address")
	assert.Contains(t, env, "POD_IPS=10.88.0.7")
	assert.Contains(t, env, "HOST_IP=127.0.0.1")
}

// TestHostNetworkPodHasTheNodesAddressAtOnce: only a pod on the host's network reports the
// node's addresses as its own, and from its first status on.
func TestHostNetworkPodHasTheNodesAddressAtOnce(t *testing.T) {
	h, g := newPodNetworkHarness(t, "10.88.0.7")
	pod := testPod("net2", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	pod.Spec.HostNetwork = true
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "the node's address before its sandbox", func(s *corev1.PodStatus) bool { return s.PodIP == "127.0.0.1" })
	close(g.open)
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	assert.Equal(t, []corev1.PodIP{{IP: "127.0.0.1"}}, h.status(pod.UID).PodIPs)
}

// TestProbesAndHooksReachThePodsAddress: an httpGet or tcpSocket action without a host goes
// to the pod's address (the kubelet's status.podIP), never the node's — and a target made
// before the address was known reaches it once it is.
func TestProbesAndHooksReachThePodsAddress(t *testing.T) {
	h, g := newPodNetworkHarness(t, "10.88.0.7")
	// The targets are read here; no probe runs (10.88.0.7 is no address of this machine's).
	c := ctr("main", "serve")
	pod := testPod("net3", corev1.RestartPolicyAlways, c)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	require.Eventually(t, func() bool { return len(g.sandboxConfigs()) == 1 }, 5*time.Second, time.Millisecond)

	h.p.mu.Lock()
	early := h.p.targetLocked(h.p.pods[pod.UID], &pod.Spec.Containers[0], "c0")
	h.p.mu.Unlock()
	assert.Empty(t, early.Host, "no fixed address: the node's is not the pod's")
	require.NotNil(t, early.PodIP)
	assert.Empty(t, early.PodIP(), "no address before the sandbox has one")

	close(g.open)
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	assert.Equal(t, "10.88.0.7", early.PodIP(), "the target made early reaches the address once known")
	h.p.mu.Lock()
	later := h.p.targetLocked(h.p.pods[pod.UID], &pod.Spec.Containers[0], "c0")
	h.p.mu.Unlock()
	assert.Empty(t, later.Host)
	assert.Equal(t, "10.88.0.7", later.PodIP())

	host := testPod("net4", corev1.RestartPolicyAlways, c)
	host.Spec.HostNetwork = true
	require.NoError(t, h.p.CreatePod(context.Background(), host))
	h.eventually(host.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	h.p.mu.Lock()
	onHost := h.p.targetLocked(h.p.pods[host.UID], &host.Spec.Containers[0], "c0")
	h.p.mu.Unlock()
	assert.Equal(t, "127.0.0.1", onHost.PodIP(), "a host-network pod is reached at the node's address")
}

// TestSandboxHostnameIsCutAsTheKubeletCutsIt: a pod name may be 253 characters long, a
// hostname 63 (runc: "sethostname: invalid argument").
func TestSandboxHostnameIsCutAsTheKubeletCutsIt(t *testing.T) {
	long := strings.Repeat("a", 62) + "-." + strings.Repeat("b", 20) // cut at 63: "aaa…a-", trimmed
	for _, c := range []struct {
		name     string
		pod      func(*corev1.Pod)
		hostname string
	}{
		{"the pod's name", func(*corev1.Pod) {}, "p-h1"},
		{"a long name", func(p *corev1.Pod) { p.Name = long }, strings.Repeat("a", 62)},
		{"exactly 63", func(p *corev1.Pod) { p.Name = strings.Repeat("c", 63) }, strings.Repeat("c", 63)},
		{"spec.hostname", func(p *corev1.Pod) { p.Name = long; p.Spec.Hostname = "web" }, "web"},
		{"hostnameOverride over hostname", func(p *corev1.Pod) {
			p.Spec.Hostname = "web"
			p.Spec.HostnameOverride = ptr.To("override.example." + strings.Repeat("d", 60))
		}, "override.example." + strings.Repeat("d", 63-len("override.example."))},
		{"a long hostnameOverride ending in a dot once cut", func(p *corev1.Pod) {
			p.Spec.HostnameOverride = ptr.To(strings.Repeat("e", 61) + "-.f")
		}, strings.Repeat("e", 61)},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := testPod("h1", corev1.RestartPolicyAlways, ctr("main", "sleep"))
			c.pod(pod)
			assert.Equal(t, c.hostname, sandboxConfig(pod, "/logs").Hostname)
		})
	}

	h, g := newPodNetworkHarness(t, "10.88.0.7")
	close(g.open)
	pod := testPod("h2", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	pod.Name = long
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	configs := g.sandboxConfigs()
	require.Len(t, configs, 1)
	assert.Equal(t, strings.Repeat("a", 62), configs[0].Hostname, "what the runtime is given")
	assert.Equal(t, long, configs[0].Name, "the sandbox keeps the pod's name")
}

// TestSubdomainAndFQDN: with spec.subdomain a pod's domain is the kubelet's
// <subdomain>.<namespace>.svc.<cluster domain> — in /etc/hosts (FQDN first) and, with
// setHostnameAsFQDN, as the sandbox's hostname, refused past 64 characters; a hostnameOverride
// names the pod whole, without a domain.
func TestSubdomainAndFQDN(t *testing.T) {
	for _, c := range []struct {
		name             string
		pod              func(*corev1.Pod)
		domain, hostname string
		err              string
	}{
		{"no subdomain", func(p *corev1.Pod) { p.Spec.SetHostnameAsFQDN = ptr.To(true) }, "", "p-f1", ""},
		{"subdomain", func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "web", "svc1" },
			"svc1.default.svc.cluster.local", "web", ""},
		{"subdomain, FQDN hostname", func(p *corev1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "web", "svc1", ptr.To(true)
		}, "svc1.default.svc.cluster.local", "web.svc1.default.svc.cluster.local", ""},
		{"an FQDN too long", func(p *corev1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = strings.Repeat("w", 40), "svc1", ptr.To(true)
		}, "svc1.default.svc.cluster.local", "", "FQDN " + strings.Repeat("w", 40) + ".svc1.default.svc.cluster.local is too long (64 characters is the max, 71 characters requested)"},
		{"hostnameOverride", func(p *corev1.Pod) {
			p.Spec.Subdomain, p.Spec.HostnameOverride, p.Spec.SetHostnameAsFQDN = "svc1", ptr.To("named.example"), ptr.To(true)
		}, "", "named.example", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := testPod("f1", corev1.RestartPolicyAlways, ctr("main", "sleep"))
			c.pod(pod)
			assert.Equal(t, c.domain, podDomain(pod, "cluster.local"))
			got, err := kernelHostname(pod, "cluster.local")
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.hostname, got)
		})
	}

	h, _ := newImageHarness(t, nil)
	h.stop()
	h.configure = func(cfg *Config) { cfg.ClusterDomain = "cluster.local" }
	h.rt.mu.Lock()
	h.rt.podIP = "10.88.0.9"
	h.rt.mu.Unlock()
	h.start()
	pod := testPod("f2", corev1.RestartPolicyAlways, corev1.Container{Name: "main", Image: "local:1"})
	pod.Spec.Hostname, pod.Spec.Subdomain, pod.Spec.SetHostnameAsFQDN = "web", "svc1", ptr.To(true)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	m := hostsMountOf(h, "main")
	require.NotNil(t, m)
	data, err := os.ReadFile(m.HostPath)
	require.NoError(t, err)
	assert.Contains(t, string(data), "\n10.88.0.9\tweb.svc1.default.svc.cluster.local\tweb\n")

	long := testPod("f3", corev1.RestartPolicyAlways, corev1.Container{Name: "main", Image: "local:1"})
	long.Spec.Hostname, long.Spec.Subdomain, long.Spec.SetHostnameAsFQDN = strings.Repeat("w", 40), "svc1", ptr.To(true)
	require.NoError(t, h.p.CreatePod(context.Background(), long))
	h.eventually(long.UID, "waiting for a sandbox", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodPending })
	assert.Eventually(t, func() bool {
		for _, e := range h.drainEvents() {
			if strings.Contains(e, "FailedCreatePodSandBox") && strings.Contains(e, "is too long") {
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "FailedCreatePodSandBox: FQDN too long")
}

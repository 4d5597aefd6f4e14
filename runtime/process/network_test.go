package process

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/test/support/cnitest"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

// podSubnet is the test's pod network.
var podSubnet = netip.MustParsePrefix("10.245.0.0/24")

// podNetwork writes the configuration of a bridge pod network (cnitest.WriteBridge) and returns
// the runtime's CNI settings and host-local's leases directory; it skips the test without the
// plugins.
func podNetwork(t *testing.T) (*CNI, string) {
	t.Helper()
	bin := cnitest.PluginDir()
	if bin == "" {
		t.Skip("no CNI plugins (containernetworking-plugins) in", cnitest.PluginDirs)
	}
	conf := t.TempDir()
	leases, err := cnitest.WriteBridge(conf, "pods", "vkpod0", podSubnet, t.TempDir())
	require.NoError(t, err)
	return &CNI{ConfDir: conf, BinDirs: []string{bin}, CacheDir: t.TempDir()}, leases
}

// inNetworkNamespace runs the test again in a network namespace of its own (TestMain enters
// it), and reports whether this is that run.
func inNetworkNamespace(t *testing.T) bool {
	t.Helper()
	if netns.InChild() {
		return true
	}
	requireRoot(t)
	podNetwork(t) // skips here, in the parent, without the plugins
	cmd, err := netns.Command([]string{"-test.run=^" + t.Name() + "$", "-test.v"})
	require.NoError(t, err)
	code, err := netns.ExitCode(cmd.Run())
	require.NoError(t, err)
	require.Zero(t, code, "the test in its network namespace failed")
	return false
}

// perlServer serves "hello from <pod>" on port to every connection: perl-base is on every
// Debian host, and an API pod does not see the test binary under the host's /tmp.
func perlServer(port int, pod string) []string {
	return []string{"perl", "-MIO::Socket::INET", "-e", fmt.Sprintf(
		`$s = IO::Socket::INET->new(LocalAddr => "0.0.0.0:%d", Listen => 5, ReuseAddr => 1) or die "listen: $!"; print "listening\n"; $| = 1; while ($c = $s->accept) { print $c "hello from %s\n"; close $c }`, port, pod)}
}

// perlConnect prints "connected" or why it could not connect to addr.
func perlConnect(addr string) []string {
	return []string{"perl", "-MIO::Socket::INET", "-e", fmt.Sprintf(
		`$| = 1; if (IO::Socket::INET->new(PeerAddr => "%s", Timeout => 2)) { print "connected\n" } else { print "refused: $!\n" }`, addr)}
}

func readLine(t *testing.T, conn net.Conn) string {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(waitFor)))
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

// TestPodNetwork: a restricted pod gets a network namespace of its own on the node's pod
// network: an address of the network, reported as the sandbox's; the node reaches it there and
// through its host port; port-forward reaches it inside its namespace; it cannot reach a
// service that listens on the host's loopback (the escape); and the stop releases its address.
func TestPodNetwork(t *testing.T) {
	if !inNetworkNamespace(t) {
		return
	}
	cni, ipam := podNetwork(t)
	r := newTestRuntime(t, Config{CNI: cni})
	host, err := net.Listen("tcp", "127.0.0.1:0") // a service of the host's, on loopback only
	require.NoError(t, err)
	t.Cleanup(func() { host.Close() })
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, "host service")
			c.Close()
		}
	}()

	const port, hostPort = 8080, 18080
	server := restrictedPod("server", nil)
	server.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port, HostPort: hostPort}}
	p := startPodWith(t, r, server, &lifecycle.SandboxConfig{Ports: []lifecycle.PortMapping{{Protocol: "TCP", ContainerPort: port, HostPort: hostPort}}},
		perlServer(port, "server"), nil)
	require.Eventually(t, func() bool { return len(logContents(t, p.log, "stdout")) > 0 }, waitFor, tick, "the server listens")

	ips, err := r.SandboxIPs(context.Background(), p.sandbox)
	require.NoError(t, err)
	require.Len(t, ips, 1)
	ip := netip.MustParseAddr(ips[0])
	assert.True(t, podSubnet.Contains(ip), "the pod's address %s is of the pod network", ip)
	sbs, err := r.ListSandboxes(context.Background())
	require.NoError(t, err)
	require.Len(t, sbs, 1)
	assert.Equal(t, ips, sbs[0].IPs)

	for _, addr := range []string{net.JoinHostPort(ip.String(), fmt.Sprint(port)), net.JoinHostPort(netns.NodeIP.String(), fmt.Sprint(hostPort))} {
		conn, err := net.DialTimeout("tcp", addr, waitFor)
		require.NoError(t, err, "the node reaches the pod at %s", addr)
		assert.Equal(t, "hello from server", readLine(t, conn), addr)
		conn.Close()
	}

	conn, err := r.dialPod(context.Background(), mustSandbox(t, r, p.sandbox), port)
	require.NoError(t, err, "port-forward to the pod's port")
	assert.Equal(t, "hello from server", readLine(t, conn))
	conn.Close()
	_, err = r.dialPod(context.Background(), mustSandbox(t, r, p.sandbox), int32(host.Addr().(*net.TCPAddr).Port))
	assert.Error(t, err, "port-forward to the host's service through the pod")

	// Without the lifecycle's DNS, the resolver configuration is the host's (no loopback
	// server in it here).
	hostDNS, _, err := (&dns.Configurer{ResolvConf: dns.HostResolvConf}).PodDNS(&corev1.Pod{Spec: corev1.PodSpec{DNSPolicy: corev1.DNSDefault}})
	require.NoError(t, err)
	want := hostDNS.ResolvConf()
	stdout := &syncbuf.Buffer{}
	require.NoError(t, r.Exec(context.Background(), p.container, []string{"cat", "/etc/resolv.conf"}, &testAttachIO{stdout: stdout, stderr: &syncbuf.Buffer{}}))
	assert.Equal(t, string(want), stdout.String(), "the pod's /etc/resolv.conf")

	attacker := startPod(t, r, restrictedPod("attacker", nil), perlConnect(host.Addr().String()), nil)
	out := attacker.output(t, r)
	assert.Contains(t, out, "refused", "a pod reached a service on the host's loopback")
	assert.NotContains(t, out, "connected")

	leases := func() []string {
		entries, _ := os.ReadDir(ipam)
		var out []string
		for _, e := range entries {
			if netip.MustParsePrefix(podSubnet.String()).Contains(parseAddr(e.Name())) {
				out = append(out, e.Name())
			}
		}
		return out
	}
	assert.Contains(t, leases(), ip.String(), "host-local's lease of the pod's address")
	require.NoError(t, r.StopSandbox(context.Background(), p.sandbox))
	assert.NotContains(t, leases(), ip.String(), "the stop released the pod's address")
}

func parseAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}

func mustSandbox(t *testing.T, r *Runtime, id string) *sandboxRecord {
	t.Helper()
	sb, err := r.loadSandbox(id)
	require.NoError(t, err)
	return sb
}

// TestNetworkNotReady: without a pod network, a restricted pod that does not ask for
// hostNetwork gets no sandbox, as a kubelet's pods wait on a node whose network plugin is not
// ready, unless --process-allow-host-network puts it on the host's; one that asks for
// hostNetwork is refused without that flag. A trusted static pod runs on the host's network.
func TestNetworkNotReady(t *testing.T) {
	requireRoot(t)
	for _, cni := range []*CNI{nil, {ConfDir: t.TempDir(), BinDirs: cnitest.PluginDirs}} {
		r, err := New(Config{StateDir: t.TempDir(), CNI: cni})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		pod := restrictedPod("waits", nil)
		require.NoError(t, r.Admit(pod))
		_, err = r.RunSandbox(context.Background(), &lifecycle.SandboxConfig{PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Pod: pod})
		require.ErrorIs(t, err, ErrNetworkNotReady)
		assert.Contains(t, err.Error(), "network is not ready (no ")
		assert.Contains(t, err.Error(), "the agent's --process-allow-host-network")
		sbs, err := r.ListSandboxes(context.Background())
		require.NoError(t, err)
		assert.Empty(t, sbs, "nothing is left of the sandbox")

		pod.Spec.HostNetwork = true
		err = r.Admit(pod)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "spec.hostNetwork: true is not allowed for an API pod")

		trusted := restrictedPod("trusted", map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource})
		require.NoError(t, r.Admit(trusted))
		id, err := r.RunSandbox(context.Background(), &lifecycle.SandboxConfig{PodUID: trusted.UID, Namespace: trusted.Namespace, Name: trusted.Name, Pod: trusted})
		require.NoError(t, err, "a trusted static pod is on the host's network")
		require.NoError(t, r.RemoveSandbox(context.Background(), id))
	}
}

// The resolver configuration the lifecycle makes (SandboxConfig.DNS) is the container's
// /etc/resolv.conf, on the host's network too (a ClusterFirstWithHostNet pod gets the
// cluster's DNS, as the kubelet's), in the container's mount namespace: the host's is not
// touched. Before, a pod on the host's network read the host's.
func TestSandboxResolvConf(t *testing.T) {
	before, err := os.ReadFile(dns.HostResolvConf)
	require.NoError(t, err)
	for _, kind := range []struct {
		name string
		cfg  Config
		pod  *corev1.Pod
	}{
		{"an API pod on the host's network", Config{AllowHostNetwork: true}, restrictedPod("dns", nil)},
		{"a trusted static pod", Config{}, restrictedPod("dns", map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource})},
	} {
		t.Run(kind.name, func(t *testing.T) {
			r := newTestRuntime(t, kind.cfg)
			kind.pod.Spec.HostNetwork, kind.pod.Spec.DNSPolicy = true, corev1.DNSClusterFirstWithHostNet
			d := &dns.Config{Servers: []string{"10.96.0.10"}, Searches: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}}
			p := startPodWith(t, r, kind.pod, &lifecycle.SandboxConfig{HostNetwork: true, DNS: d}, []string{"cat", "/etc/resolv.conf"}, nil)
			assert.Contains(t, p.output(t, r), string(d.ResolvConf()))
			after, err := os.ReadFile(dns.HostResolvConf)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the host's resolv.conf")
		})
	}
}

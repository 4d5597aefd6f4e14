package e2enetns

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/cnitest"
	"github.com/vk-static/vk-static/test/support/podwait"
)

// TestPodNetwork: with the process provider and a CNI configuration (a bridge of
// containernetworking-plugins, in this test's network namespace), an API pod gets an address of
// the pod network, which its status reports and at which the node reaches it — its readiness
// probe included — and its host port; a pod cannot reach the agent's healthz port on the
// host's loopback.
func TestPodNetwork(t *testing.T) {
	ctx := context.Background()
	bin := cnitest.PluginDir()
	if bin == "" {
		t.Skip("no CNI plugins (containernetworking-plugins) in", cnitest.PluginDirs)
	}
	subnet := netip.MustParsePrefix("10.246.0.0/24")
	conf := t.TempDir()
	leases, err := cnitest.WriteBridge(conf, "e2e-pods", "vke2e0", subnet, t.TempDir())
	require.NoError(t, err)
	a := startAgent(t, "node-pods", "--node-ip", NodeIP.String(), "--address", NodeIP.String(), "--provider", "process",
		"--cni-conf-dir", conf, "--cni-bin-dir", bin, "--cni-cache-dir", t.TempDir(), "--cgroup-root", cgrouptest.Root(t))
	ns := env.Namespace(t)

	const port, hostPort = 8080, 18082
	server := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: corev1.PodSpec{
			NodeName:                      a.Node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "main", Image: "perl",
				Command: []string{"perl", "-MIO::Socket::INET", "-e", fmt.Sprintf(
					`$s = IO::Socket::INET->new(LocalAddr => "0.0.0.0:%d", Listen => 5, ReuseAddr => 1) or die "listen: $!"; while ($c = $s->accept) { print $c "hello from the pod\n"; close $c }`, port)},
				Ports:          []corev1.ContainerPort{{ContainerPort: port, HostPort: hostPort}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}, PeriodSeconds: 1},
			}},
		},
	}
	_, err = env.Admin.CoreV1().Pods(ns).Create(ctx, server, metav1.CreateOptions{})
	require.NoError(t, err)
	var podIP netip.Addr
	podwait.Until(t, env.Admin, ns, server.Name, 60*time.Second, "Ready with a pod IP", func(p *corev1.Pod) error {
		if !podReady(p) {
			return fmt.Errorf("not ready: %s", p.Status.Phase)
		}
		ip, err := netip.ParseAddr(p.Status.PodIP)
		if err != nil {
			return err
		}
		podIP = ip
		return nil
	})
	assert.True(t, subnet.Contains(podIP), "pod IP %s of the pod network %s", podIP, subnet)
	for _, addr := range []string{net.JoinHostPort(podIP.String(), fmt.Sprint(port)), net.JoinHostPort(NodeIP.String(), fmt.Sprint(hostPort))} {
		conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
		require.NoError(t, err, "the node reaches the pod at %s", addr)
		require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
		line, err := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		require.NoError(t, err, addr)
		assert.Equal(t, "hello from the pod\n", line, addr)
	}

	// The agent's healthz port is on the host's loopback only.
	healthz, err := url.Parse(a.Healthz)
	require.NoError(t, err)
	attacker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "attacker"},
		Spec: corev1.PodSpec{
			NodeName:      a.Node,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "perl", Command: []string{"perl", "-MIO::Socket::INET", "-e", fmt.Sprintf(
				`if (IO::Socket::INET->new(PeerAddr => "%s", Timeout => 2)) { print "connected\n" } else { print "refused: $!\n" }`, healthz.Host)}}},
		},
	}
	_, err = env.Admin.CoreV1().Pods(ns).Create(ctx, attacker, metav1.CreateOptions{})
	require.NoError(t, err)
	podwait.Until(t, env.Admin, ns, attacker.Name, 60*time.Second, "Succeeded", func(p *corev1.Pod) error {
		if p.Status.Phase != corev1.PodSucceeded {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	logs, err := env.Admin.CoreV1().Pods(ns).GetLogs(attacker.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(logs), "refused"), "a pod reached the agent's healthz port on the host's loopback: %q", logs)

	// Deleted, the pods leave no process, and their sandboxes leave the pod network: the
	// address is released (host-local's lease file).
	for _, name := range []string{server.Name, attacker.Name} {
		require.NoError(t, env.Admin.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}))
	}
	for _, name := range []string{server.Name, attacker.Name} {
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		procs, err := agentproc.ContainerProcesses(a.Dir)
		require.NoError(c, err)
		assert.Empty(c, procs)
		_, err = os.Stat(filepath.Join(leases, podIP.String()))
		assert.True(c, os.IsNotExist(err), "the pod's address is still leased: %v", err)
	}, 20*time.Second, 100*time.Millisecond, "the pods' processes end and the address is released")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

package e2ecri

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// podNetworkPod is imagePod on the pod network (the package containerd's bridge).
func podNetworkPod(name string, args ...string) *corev1.Pod {
	p := imagePod(name, workloadImage, args...)
	p.Spec.HostNetwork = false
	return p
}

// TestPodNetwork: static pods on the bridge network, as on a cluster — each reports its
// sandbox's address (in the bridge's subnet, one, the same as the runtime's) in its mirror,
// and the node's as its host address; httpGet and tcpSocket probes reach the pod's address and
// make it Ready; the downward API gives a container the pod's address; /etc/hosts is the
// kubelet's (the pod's address and hostname, hostAliases); the node reaches a pod
// at its address and through its hostPort (portmap); one pod reaches another; a pod whose
// name is longer than a hostname runs with its name cut as the kubelet cuts it; subdomain,
// setHostnameAsFQDN (with --cluster-domain) and hostnameOverride name a pod as the kubelet
// names it (its HOSTNAME and /etc/hosts). Once removed,
// nothing is left: sandboxes, network namespaces, addresses.
func TestPodNetwork(t *testing.T) {
	a := startAgent(t, "--cluster-domain", "cluster.local")
	const hostPort = 18080
	server := podNetworkPod("server", "serve", "--port", "8080")
	main := &server.Spec.Containers[0]
	main.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, HostPort: hostPort, Protocol: corev1.ProtocolTCP}}
	main.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1,
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}}
	main.LivenessProbe = &corev1.Probe{PeriodSeconds: 1,
		ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}}
	a.writePod(server)
	client := podNetworkPod("client", "sleep")
	client.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
	}
	client.Spec.HostAliases = []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}}}
	a.writePod(client)
	// A static pod's name is its manifest's and the node's: far more than 63 characters here.
	longName := "a-static-pod-whose-name-is-longer-than-any-hostname-may-be"
	a.writePod(podNetworkPod(longName, "sleep"))
	fqdn := podNetworkPod("fqdn", "sleep")
	fqdn.Spec.Hostname, fqdn.Spec.Subdomain, fqdn.Spec.SetHostnameAsFQDN = "web", "svc1", ptr.To(true)
	a.writePod(fqdn)
	override := podNetworkPod("override", "sleep")
	override.Spec.Subdomain, override.Spec.HostnameOverride = "svc1", ptr.To("custom.example")
	a.writePod(override)

	readyServer := a.waitMirror("server", 90*time.Second, "Running and Ready through its probes", func(p *corev1.Pod) error {
		if err := podwait.MainRunning(p); err != nil {
			return err
		}
		if cs := podwait.MainStatus(p); !cs.Ready {
			return fmt.Errorf("main not ready: %s", podwait.Describe(cs))
		}
		if !podReady(p) {
			return fmt.Errorf("pod not Ready: %s", podwait.Describe(p.Status.Conditions))
		}
		return nil
	})
	runningClient := a.waitMirror("client", 60*time.Second, "Running", podwait.MainRunning)
	long := a.waitMirror(longName, 60*time.Second, "Running", podwait.MainRunning)
	runningFQDN := a.waitMirror("fqdn", 60*time.Second, "Running", podwait.MainRunning)
	runningOverride := a.waitMirror("override", 60*time.Second, "Running", podwait.MainRunning)

	rs := runtimeService(t)
	serverIP := podAddress(t, readyServer)
	clientIP := podAddress(t, runningClient)
	podAddress(t, long)
	assert.NotEqual(t, serverIP, clientIP)
	for _, p := range []*corev1.Pod{readyServer, runningClient, long} {
		assert.Equal(t, "127.0.0.1", p.Status.HostIP, "%s: the node's address is the host's", p.Name)
		sandboxes, err := rs.ListPodSandbox(t.Context(), nil)
		require.NoError(t, err)
		found := false
		for _, s := range sandboxes {
			if s.GetMetadata().GetName() != p.Name {
				continue
			}
			st, err := rs.PodSandboxStatus(t.Context(), s.GetId(), false)
			require.NoError(t, err)
			assert.Equal(t, p.Status.PodIP, st.GetStatus().GetNetwork().GetIp(), "%s: the runtime's address", p.Name)
			found = true
		}
		assert.True(t, found, "%s: no sandbox", p.Name)
	}

	exec := func(p *corev1.Pod, cmd ...string) string {
		t.Helper()
		id, ok := strings.CutPrefix(podwait.MainStatus(p).ContainerID, "containerd://")
		require.True(t, ok, podwait.MainStatus(p).ContainerID)
		stdout, stderr, err := rs.ExecSync(t.Context(), id, cmd, 20*time.Second)
		require.NoError(t, err, "%v: stderr %s", cmd, stderr)
		return string(stdout)
	}
	clientEnv := exec(runningClient, "workload", "env")
	assert.Contains(t, clientEnv, "POD_IP="+clientIP.String()+"\n", "the downward API's status.podIP")
	assert.Contains(t, clientEnv, "HOST_IP=127.0.0.1\n")
	assert.Contains(t, exec(long, "workload", "env"), "HOSTNAME="+wantHostname(long.Name)+"\n", "the hostname, cut")
	fqdnIP := podAddress(t, runningFQDN)
	assert.Contains(t, exec(runningFQDN, "workload", "env"), "HOSTNAME=web.svc1.default.svc.cluster.local\n", "setHostnameAsFQDN")
	assert.Contains(t, exec(runningFQDN, "workload", "cat", "/etc/hosts"), "\n"+fqdnIP.String()+"\tweb.svc1.default.svc.cluster.local\tweb\n")
	overrideIP := podAddress(t, runningOverride)
	assert.Contains(t, exec(runningOverride, "workload", "env"), "HOSTNAME=custom.example\n", "hostnameOverride")
	assert.Contains(t, exec(runningOverride, "workload", "cat", "/etc/hosts"), "\n"+overrideIP.String()+"\tcustom.example\n", "no domain with an override")
	hosts := exec(runningClient, "workload", "cat", "/etc/hosts")
	assert.True(t, strings.HasPrefix(hosts, "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"), "the kubelet's /etc/hosts:\n%s", hosts)
	assert.Contains(t, hosts, "\n"+clientIP.String()+"\t"+runningClient.Name+"\n", "the pod's address and hostname")
	assert.Contains(t, hosts, "\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n")

	body := exec(runningClient, "workload", "get", "http://"+net.JoinHostPort(serverIP.String(), "8080")+"/")
	assert.Equal(t, "hello from "+readyServer.Name+"\n", body, "pod to pod")
	for _, url := range []string{
		"http://" + net.JoinHostPort(serverIP.String(), "8080") + "/",
		"http://127.0.0.1:" + strconv.Itoa(hostPort) + "/",
	} {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := get(url)
			require.NoError(c, err)
			assert.Equal(c, "hello from "+readyServer.Name+"\n", got)
		}, 10*time.Second, 100*time.Millisecond, "GET %s from the node", url)
	}

	a.removePods("server", "client", longName, "fqdn", "override")
	nothingLeft(t)
}

// podAddress checks that p reports one address, in the bridge's subnet, and returns it.
func podAddress(t *testing.T, p *corev1.Pod) netip.Addr {
	t.Helper()
	ip, err := netip.ParseAddr(p.Status.PodIP)
	require.NoError(t, err, "%s: podIP %q", p.Name, p.Status.PodIP)
	assert.True(t, podSubnet.Contains(ip), "%s: podIP %s not in the pod network %s", p.Name, ip, podSubnet)
	assert.Equal(t, []corev1.PodIP{{IP: p.Status.PodIP}}, p.Status.PodIPs, "%s: podIPs", p.Name)
	return ip
}

// wantHostname is the kubelet's hostname for a pod named name: cut to 63 characters, without
// a trailing '-' or '.'.
func wantHostname(name string) string {
	if len(name) <= 63 {
		return name
	}
	return strings.TrimRight(name[:63], "-.")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// get fetches url from the node.
func get(url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(data), err
}

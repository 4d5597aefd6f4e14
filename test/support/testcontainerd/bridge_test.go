package testcontainerd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// TestBridgeIsRefusedOnTheMachinesNetwork: the bridge and portmap's rules would be made in
// the machine's own network namespace.
func TestBridgeIsRefusedOnTheMachinesNetwork(t *testing.T) {
	if netns.InChild() {
		t.Skip("in a namespace of its own")
	}
	_, err := testcontainerd.Start(context.Background(), testcontainerd.Options{
		Bridge: &testcontainerd.Bridge{Subnet: netip.MustParsePrefix("10.244.0.0/24")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "network namespace of the test's own")
}

// TestBridgeNetwork runs, in a network namespace of its own, two pod-network sandboxes on a
// Bridge: each has an address of the subnet, the node reaches a pod at its address and
// through a host port (on 127.0.0.1 and the node's address), one pod reaches the other, and
// Stop, with both still running, leaves no bridge, network namespace mount or directory.
func TestBridgeNetwork(t *testing.T) {
	if !netns.InChild() {
		cmd, err := netns.Command([]string{"-test.run=^TestBridgeNetwork$", "-test.v"})
		require.NoError(t, err)
		code, err := netns.ExitCode(cmd.Run())
		require.NoError(t, err)
		require.Zero(t, code, "the test in its network namespace failed")
		return
	}
	ctx := context.Background()
	subnet := netip.MustParsePrefix("10.244.0.0/24")
	c, err := testcontainerd.Start(ctx, testcontainerd.Options{Bridge: &testcontainerd.Bridge{Subnet: subnet}})
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			assert.NoError(t, c.Stop())
		}
	})
	assert.Equal(t, "cni0", c.Bridge().Name)
	assert.Equal(t, netip.MustParseAddr("10.244.0.1"), c.Bridge().Gateway)
	rs := runtimeService(t, c)
	assert.True(t, networkReady(t, rs), "NetworkReady with the bridge network")

	img, err := testimage.Build(testimage.Options{})
	require.NoError(t, err)
	const ref = "localhost/test/workload:1"
	require.NoError(t, testimage.Import(ctx, c, ref, img))

	const hostPort = 18080
	_, serverIP := runPodNetworkPod(t, rs, "server", ref, []string{"serve", "--port", "8080"},
		&runtimeapi.PortMapping{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 8080, HostPort: hostPort})
	_, clientIP := runPodNetworkPod(t, rs, "client", ref, []string{"sleep"}, nil)
	for _, ip := range []netip.Addr{serverIP, clientIP} {
		assert.True(t, subnet.Contains(ip), "pod address %v in %v", ip, subnet)
	}
	assert.NotEqual(t, serverIP, clientIP)
	inUse, err := c.PodIPsInUse()
	require.NoError(t, err)
	assert.ElementsMatch(t, []netip.Addr{serverIP, clientIP}, inUse, "host-local's allocations")

	for _, url := range []string{
		fmt.Sprintf("http://%s/", net.JoinHostPort(serverIP.String(), "8080")),
		fmt.Sprintf("http://127.0.0.1:%d/", hostPort),
		fmt.Sprintf("http://%s:%d/", netns.NodeIP, hostPort),
	} {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			body, err := httpGet(url)
			require.NoError(c, err)
			assert.Contains(c, body, "hello from server")
		}, 10*time.Second, 50*time.Millisecond, "GET %s from the node", url)
	}

	clientContainer := containerOf(t, rs, "client")
	stdout, stderr, err := rs.ExecSync(ctx, clientContainer, []string{"workload", "get", "http://" + net.JoinHostPort(serverIP.String(), "8080") + "/"}, 10*time.Second)
	require.NoError(t, err, "stderr: %s", stderr)
	assert.Contains(t, string(stdout), "hello from server", "pod to pod")

	dir := c.Dir()
	stopped = true
	require.NoError(t, c.Stop())
	_, err = net.InterfaceByName("cni0")
	assert.Error(t, err, "the bridge is gone")
	left, err := mounts.Under(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "mounts left under the instance's directory")
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// runPodNetworkPod runs args of the workload image in a new sandbox on the pod network,
// hostname name, and returns the sandbox's ID and address. The sandbox is left running.
func runPodNetworkPod(t *testing.T, rs internalapi.RuntimeService, name, image string, args []string, port *runtimeapi.PortMapping) (string, netip.Addr) {
	t.Helper()
	ctx := context.Background()
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "test", Uid: "uid-" + name},
		Hostname:     name,
		LogDirectory: t.TempDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD},
		}},
	}
	if port != nil {
		cfg.PortMappings = []*runtimeapi.PortMapping{port}
	}
	sandbox, err := rs.RunPodSandbox(ctx, cfg, "") // Stop removes it, running
	require.NoError(t, err)
	container, err := rs.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Args:     args,
		LogPath:  name + ".log",
	}, cfg)
	require.NoError(t, err)
	require.NoError(t, rs.StartContainer(ctx, container))
	status, err := rs.PodSandboxStatus(ctx, sandbox, false)
	require.NoError(t, err)
	ip, err := netip.ParseAddr(status.GetStatus().GetNetwork().GetIp())
	require.NoError(t, err, "the sandbox's address")
	return sandbox, ip
}

// containerOf is the ID of the container named name.
func containerOf(t *testing.T, rs internalapi.RuntimeService, name string) string {
	t.Helper()
	list, err := rs.ListContainers(context.Background(), nil)
	require.NoError(t, err)
	for _, c := range list {
		if c.GetMetadata().GetName() == name {
			return c.GetId()
		}
	}
	t.Fatalf("no container %s", name)
	return ""
}

func httpGet(url string) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("%s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(body)), err
}

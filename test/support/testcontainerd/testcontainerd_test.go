package testcontainerd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"

	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

var cd *testcontainerd.Containerd

func TestMain(m *testing.M) {
	if netns.InChild() {
		// TestBridgeNetwork, re-executed in network and mount namespaces of its own: it starts
		// the containerd it needs.
		if err := netns.Enter(netns.NodeIP); err != nil {
			fmt.Fprintln(os.Stderr, "testcontainerd:", err)
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	os.Exit(testcontainerd.Main(m, &cd))
}

func runtimeService(t *testing.T, c *testcontainerd.Containerd) internalapi.RuntimeService {
	t.Helper()
	ctx := context.Background()
	rs, err := criclient.NewRemoteRuntimeService(ctx, c.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rs.Close(ctx) })
	return rs
}

// networkReady is the NetworkReady condition of the runtime's status.
func networkReady(t *testing.T, rs internalapi.RuntimeService) bool {
	t.Helper()
	status, err := rs.Status(context.Background(), false)
	require.NoError(t, err)
	for _, c := range status.GetStatus().GetConditions() {
		if c.Type == runtimeapi.NetworkReady {
			return c.Status
		}
	}
	t.Fatalf("no NetworkReady condition in %v", status)
	return false
}

func TestRuntimeAnswersWithTheSandboxImage(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, "unix://"+cd.Address(), cd.Endpoint())
	assert.True(t, strings.HasPrefix(cd.Root(), cd.Dir()+"/"), "root %s under %s", cd.Root(), cd.Dir())
	rs := runtimeService(t, cd)
	v, err := rs.Version(ctx, "v1")
	require.NoError(t, err)
	assert.Equal(t, "containerd", v.RuntimeName)
	assert.Equal(t, "v1", v.RuntimeApiVersion)
	assert.False(t, networkReady(t, rs), "no CNI network without LoopbackCNI")

	is, err := criclient.NewRemoteImageService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	img, err := is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: testcontainerd.SandboxImage}, false)
	require.NoError(t, err)
	require.NotNil(t, img.GetImage(), "sandbox image %s imported", testcontainerd.SandboxImage)
}

// pod is a running sandbox with one container from an imported workload image.
type pod struct {
	sandbox, container, logPath string
}

// runPod runs `workload log --every 50ms` in a new sandbox (host network unless podNetwork)
// and removes the sandbox when the test ends.
func runPod(t *testing.T, c *testcontainerd.Containerd, rs internalapi.RuntimeService, name string, podNetwork bool) pod {
	t.Helper()
	ctx := context.Background()
	img, err := testimage.Build(testimage.Options{Cmd: []string{"log", "--every", "50ms"}})
	require.NoError(t, err)
	ref := "localhost/test/log:1"
	require.NoError(t, testimage.Import(ctx, c, ref, img))

	network := runtimeapi.NamespaceMode_NODE
	if podNetwork {
		network = runtimeapi.NamespaceMode_POD
	}
	logDir := t.TempDir()
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "test", Uid: "uid-" + name},
		LogDirectory: logDir,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: network},
		}},
	}
	sandbox, err := rs.RunPodSandbox(ctx, sandboxConfig, "")
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, rs.StopPodSandbox(ctx, sandbox))
		assert.NoError(t, rs.RemovePodSandbox(ctx, sandbox))
	})
	container, err := rs.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "log"},
		Image:    &runtimeapi.ImageSpec{Image: ref},
		LogPath:  "log_0.log",
	}, sandboxConfig)
	require.NoError(t, err)
	require.NoError(t, rs.StartContainer(ctx, container))
	return pod{sandbox: sandbox, container: container, logPath: filepath.Join(logDir, "log_0.log")}
}

// waitForLog waits until the container's CRI log file holds a line containing want.
func waitForLog(t *testing.T, path, want string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		data, err := os.ReadFile(path)
		require.NoError(c, err)
		assert.Contains(c, string(data), want)
	}, 10*time.Second, 20*time.Millisecond, "log %s", path)
}

func TestHostNetworkPodRunsAnImportedImage(t *testing.T) {
	rs := runtimeService(t, cd)
	p := runPod(t, cd, rs, "host-network", false)
	waitForLog(t, p.logPath, " stdout F tick 1 from ") // the CRI log format

	stdout, stderr, err := rs.ExecSync(context.Background(), p.container, []string{"workload", "cat", testimage.MarkerPath}, 10*time.Second)
	require.NoError(t, err, "stderr: %s", stderr)
	assert.Equal(t, testimage.DefaultMarker, string(stdout), "exec runs in the image's filesystem")
	_, err = os.Stat(testimage.MarkerPath)
	assert.ErrorIs(t, err, os.ErrNotExist, "the marker is in the image only, not on the host")
}

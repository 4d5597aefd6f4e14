package testcontainerd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criclient "k8s.io/cri-client/pkg"

	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// TestRestartKeepsContainersAndStopLeavesNothing runs a host-network pod, restarts containerd
// under it, and stops the instance with the pod still running: no shim, container process,
// mount or shim socket of the instance may be left, nor its directory. A pod-network sandbox
// fails first; without a CNI network containerd 1.6 leaves its network namespace mounted,
// which Stop removes too.
func TestRestartKeepsContainersAndStopLeavesNothing(t *testing.T) {
	for _, loopbackCNI := range []bool{false, true} {
		t.Run("LoopbackCNI="+strconv.FormatBool(loopbackCNI), func(t *testing.T) {
			restartAndStop(t, loopbackCNI)
		})
	}
}

func restartAndStop(t *testing.T, loopbackCNI bool) {
	ctx := context.Background()
	began := time.Now()
	c, err := Start(ctx, Options{LoopbackCNI: loopbackCNI})
	require.NoError(t, err)
	t.Logf("start took %v", time.Since(began))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})

	rs, err := criclient.NewRemoteRuntimeService(ctx, c.Endpoint(), 10*time.Second, nil, false)
	require.NoError(t, err)
	defer rs.Close(ctx)
	status, err := rs.Status(ctx, false)
	require.NoError(t, err)
	networkReady := false
	for _, cond := range status.GetStatus().GetConditions() {
		networkReady = networkReady || cond.Type == runtimeapi.NetworkReady && cond.Status
	}
	assert.Equal(t, loopbackCNI, networkReady, "the loopback CNI network, and only it, makes the network ready")

	_, err = rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod-network", Namespace: "test", Uid: "uid-pod-network"},
	}, "")
	require.Error(t, err, "no pod network here (the loopback network gives a pod no eth0 address)")

	img, err := testimage.Build(testimage.Options{Cmd: []string{"sleep"}})
	require.NoError(t, err)
	require.NoError(t, testimage.Import(ctx, c, "localhost/test/sleep:1", img))
	sandboxConfig := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "host-network", Namespace: "test", Uid: "uid-host-network"},
		LogDirectory: t.TempDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
		}},
	}
	sandbox, err := rs.RunPodSandbox(ctx, sandboxConfig, "")
	require.NoError(t, err)
	container, err := rs.CreateContainer(ctx, sandbox, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "sleep"},
		Image:    &runtimeapi.ImageSpec{Image: "localhost/test/sleep:1"},
		LogPath:  "sleep_0.log",
	}, sandboxConfig)
	require.NoError(t, err)
	require.NoError(t, rs.StartContainer(ctx, container))

	// What runs and is mounted for the instance: its shim, the containers' init processes, the
	// shim's socket, the root filesystems and the sandbox's /dev/shm.
	shims, err := c.Shims()
	require.NoError(t, err)
	require.Len(t, shims, 1, "one shim serves the sandbox and its container")
	inits := initPIDs(t, c)
	require.Len(t, inits, 2)
	sockets, err := c.shimSockets()
	require.NoError(t, err)
	require.Len(t, sockets, 1)
	mounted, err := mounts.Under(c.Dir())
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(mounted), 3, "two root filesystems and a /dev/shm: %v", mounted)
	if !loopbackCNI {
		assert.True(t, containsPrefix(mounted, filepath.Join(c.paths.State, "io.containerd.grpc.v1.cri", "netns")+"/"),
			"the failed sandbox's network namespace is left mounted, under state: %v", mounted)
	}

	oldPID := c.PID()
	began = time.Now()
	require.NoError(t, c.Restart(ctx))
	t.Logf("restart took %v", time.Since(began))
	assert.NotEqual(t, oldPID, c.PID())
	st, err := rs.ContainerStatus(ctx, container, false)
	require.NoError(t, err, "the client reconnects to the restarted containerd")
	assert.Equal(t, runtimeapi.ContainerState_CONTAINER_RUNNING, st.GetStatus().GetState(), "the container kept running")
	shimsAfter, err := c.Shims()
	require.NoError(t, err)
	assert.ElementsMatch(t, shims, shimsAfter, "the same shim serves the restarted containerd")

	stopped = true
	began = time.Now()
	require.NoError(t, c.Stop())
	t.Logf("stop took %v", time.Since(began))
	for _, pid := range append(shims, inits...) {
		assert.False(t, running(pid), "process %d of the instance still running", pid)
	}
	left, err := c.Shims()
	require.NoError(t, err)
	assert.Empty(t, left)
	for _, s := range sockets {
		assert.NoFileExists(t, s)
	}
	mounted, err = mounts.Under(c.Dir())
	require.NoError(t, err)
	assert.Empty(t, mounted)
	assert.NoDirExists(t, c.Dir())
	require.NoError(t, c.Stop(), "Stop is idempotent")
}

// initPIDs are the containers' init processes, from the pid files in their bundles.
func initPIDs(t *testing.T, c *Containerd) []int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.paths.State, "io.containerd.runtime.v2.task", "*", "*", "init.pid"))
	require.NoError(t, err)
	var pids []int
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

// running tells whether pid is a live process: not gone, and not a zombie nobody reaped.
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

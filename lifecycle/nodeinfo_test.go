package lifecycle

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// versionedRuntime is the fake runtime with a name and version, as CRI's.
type versionedRuntime struct{ *fakeRuntime }

func (versionedRuntime) Name() string    { return "containerd" }
func (versionedRuntime) Version() string { return "1.6.20" }

func TestConfigureNodeFromTheMachine(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	p, err := New(context.Background(), Config{Runtime: versionedRuntime{newFakeRuntime(clk)}, RuntimeName: "containerd", RootDir: t.TempDir(), Clock: clk})
	require.NoError(t, err)
	var n corev1.Node
	p.ConfigureNode(&n)
	kernel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(kernel)), n.Status.NodeInfo.KernelVersion)
	assert.Equal(t, "containerd://1.6.20", n.Status.NodeInfo.ContainerRuntimeVersion)
	assert.NotEmpty(t, n.Status.NodeInfo.BootID)
	if _, err := os.Stat("/etc/os-release"); err == nil {
		assert.NotEmpty(t, n.Status.NodeInfo.OSImage)
	}

	p, err = New(context.Background(), Config{Runtime: newFakeRuntime(clk), RuntimeName: "process", RootDir: t.TempDir(), Clock: clk})
	require.NoError(t, err)
	p.ConfigureNode(&n)
	assert.True(t, strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "process://"), n.Status.NodeInfo.ContainerRuntimeVersion)
}

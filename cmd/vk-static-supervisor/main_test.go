package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process"
)

const module = "github.com/vk-static/vk-static/"

// allowedPackages are the module's packages the supervisor may link: itself and the leaf
// packages it is made of. Anything else of the module (lifecycle, node, ...) would bring
// client-go and its kin along.
var allowedPackages = []string{
	"cmd/vk-static-supervisor",
	"runtime/process/supervisor",
	"runtime/process/internal/",
	"containerlog/logwriter",
	"internal/crilog",
	"internal/atomicfile",
	"internal/mounts",
}

// TestImports keeps the binary small: the standard library, golang.org/x/sys and the
// supervisor's own packages — no k8s.io, prometheus, protobuf or klog, whose package
// initialisation every supervisor would pay for at start and in memory.
func TestImports(t *testing.T) {
	goTool := goTool(t)
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	require.NoError(t, err, "go list -deps")
	deps := strings.Fields(string(out))
	require.Contains(t, deps, module+"runtime/process/supervisor")
	for _, pkg := range deps {
		first, _, _ := strings.Cut(pkg, "/")
		switch {
		case !strings.Contains(first, "."): // the standard library
		case pkg == "golang.org/x/sys/unix" || strings.HasPrefix(pkg, "golang.org/x/sys/"):
		case strings.HasPrefix(pkg, module):
			rel := strings.TrimPrefix(pkg, module)
			ok := false
			for _, allowed := range allowedPackages {
				ok = ok || rel == allowed || (strings.HasSuffix(allowed, "/") && strings.HasPrefix(rel, allowed))
			}
			assert.True(t, ok, "the supervisor links %s: keep it to leaf packages (see runtime/process/supervisor's doc)", pkg)
		default:
			assert.Fail(t, "the supervisor links a dependency", "%s: only the standard library and golang.org/x/sys may be linked", pkg)
		}
	}
}

// The runtime runs containers under the built supervisor when Config.SupervisorPath names it,
// and an agent without it (re-executing itself) adopts them: the records and the socket
// protocol are the same whichever binary supervises.
func TestRuntimeWithSupervisorBinary(t *testing.T) {
	bin := buildSupervisor(t)

	ctx := context.Background()
	state := t.TempDir()
	r, err := process.New(process.Config{StateDir: state, SupervisorPath: bin})
	require.NoError(t, err)
	sb, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{Namespace: "ns", Name: "pod"})
	require.NoError(t, err)
	logPath := filepath.Join(t.TempDir(), "0.log")
	id, err := r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{
		Name: "app", Command: []string{"sh", "-c", "echo started; exec sleep 60"}, LogPath: logPath,
	})
	require.NoError(t, err)
	require.NoError(t, r.StartContainer(ctx, id))
	require.Eventually(t, func() bool {
		log, _ := os.ReadFile(logPath)
		return strings.Contains(string(log), " stdout F started\n")
	}, 10*time.Second, 10*time.Millisecond, "the workload's output in its log")

	var st struct {
		SupervisorPID int `json:"supervisorPid"`
	}
	data, err := os.ReadFile(filepath.Join(state, "containers", id, "state.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &st))
	exe, err := os.Readlink("/proc/" + strconv.Itoa(st.SupervisorPID) + "/exe")
	require.NoError(t, err)
	assert.Equal(t, bin, exe, "the container's supervisor")
	r.Close()

	// An agent that re-executes itself takes the container up, stops it, and hears of its end
	// through the supervisor's socket.
	r2, err := process.New(process.Config{StateDir: state})
	require.NoError(t, err)
	defer r2.Close()
	status, err := r2.ContainerStatus(ctx, id)
	require.NoError(t, err)
	require.Equal(t, lifecycle.ContainerRunning, status.State)
	require.NoError(t, r2.StopContainer(ctx, id, 5*time.Second))
	require.Eventually(t, func() bool {
		status, err = r2.ContainerStatus(ctx, id)
		return err == nil && status.State == lifecycle.ContainerExited
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, int32(128+15), status.ExitCode, "ended by SIGTERM")
}

func goTool(tb testing.TB) string {
	tb.Helper()
	path, err := exec.LookPath("go")
	if err != nil {
		tb.Skipf("no go tool to list or build the supervisor: %v", err)
	}
	return path
}

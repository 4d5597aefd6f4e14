package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
)

// rootlessAgentEnv makes the test binary an agent that is not root (rootlessAgent).
const rootlessAgentEnv = "PROCESS_TEST_ROOTLESS_DIR"

// rootlessAgent runs, as whoever it is, a container with a read-only mount (its supervisor in a
// user and mount namespace of its own), and prints what the container printed, its exit code, and
// whether a container as root was refused.
func rootlessAgent(dir string) int {
	// Asked for cgroups it cannot have, it says why, and runs its containers without.
	r, err := New(Config{StateDir: filepath.Join(dir, "state"), Cgroups: &Cgroups{Root: "/vk-static-rootless-test", PerQOS: true}})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer r.Close()
	fmt.Println(r.CgroupsUnavailable())
	enforced, _ := r.EnforcesLimits()
	fmt.Println("limits enforced:", enforced)
	ctx := context.Background()
	sb, err := r.RunSandbox(ctx, &lifecycle.SandboxConfig{Name: "rootless"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	logPath := filepath.Join(dir, "c.log")
	target := filepath.Join(dir, "target")
	id, err := r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{
		Name:    "c",
		Command: []string{"sh", "-c", `id -u; grep CapEff /proc/self/status; cat $0/data; echo w 2>/dev/null > $0/w || echo ro-refused`, target},
		Env:     []string{testPath},
		LogPath: logPath,
		Mounts:  []lifecycle.Mount{{HostPath: filepath.Join(dir, "host"), ContainerPath: target, ReadOnly: true}},
	})
	if err == nil {
		err = r.StartContainer(ctx, id)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	for {
		s, err := r.ContainerStatus(ctx, id)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		if s.State == lifecycle.ContainerExited {
			fmt.Println("exit", s.ExitCode)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The container ended: its supervisor is reaped once its watch ends.
	for r.watchOf(id) != nil {
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(logPath)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if parts := strings.SplitN(line, " ", 4); len(parts) == 4 {
			fmt.Println("log", parts[1], parts[3])
		}
	}
	_, err = r.CreateContainer(ctx, sb, &lifecycle.ContainerConfig{Name: "root", Command: []string{"true"}, User: &lifecycle.User{}})
	fmt.Println("as root:", err != nil)
	return 0
}

// An agent that is not root runs its containers as itself, with mounts in a user namespace,
// and without cgroups, which it says.
func TestRootlessAgent(t *testing.T) {
	requireRoot(t) // to become another user
	const nobody = 65534
	dir, err := os.MkdirTemp("", "rootless")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	// The agent binary (this test binary) where nobody can run it, and a directory it owns.
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "agent")
	copyFile(t, self, bin)
	for _, d := range []string{"host", "target"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host", "data"), []byte("mounted\n"), 0o644))
	require.NoError(t, os.Chmod(dir, 0o755))
	for _, p := range []string{dir, filepath.Join(dir, "host"), filepath.Join(dir, "target")} {
		require.NoError(t, os.Chown(p, nobody, nobody))
	}

	cmd := exec.Command(bin)
	cmd.Env = []string{rootlessAgentEnv + "=" + dir, "GORACE=atexit_sleep_ms=0"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// The workload has no capabilities although its supervisor mounted with one.
	assert.Equal(t, "cgroups cannot be used: the agent is not root\nlimits enforced: false\nexit 0\nlog stdout 65534\nlog stdout CapEff:\t0000000000000000\nlog stdout mounted\nlog stdout ro-refused\nas root: true\n", string(out))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

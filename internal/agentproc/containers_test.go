package agentproc

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startSession starts sh -c script leading a session of its own, with extra environment; the
// test kills and reaps it in any case.
func startSession(t *testing.T, script string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd
}

func startTime(t *testing.T, pid int) uint64 {
	t.Helper()
	procs, err := allProcesses()
	require.NoError(t, err)
	p, ok := procs[pid]
	require.True(t, ok, "pid %d", pid)
	return p.startTime
}

func writeState(t *testing.T, dir, id string, w Workload) {
	t.Helper()
	path := filepath.Join(dir, "root", "process", "containers", id, "state.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	data, err := json.Marshal(w)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func pids(procs []ContainerProcess) []int {
	var out []int
	for _, p := range procs {
		out = append(out, p.Pid)
	}
	slices.Sort(out)
	return out
}

// expected lists, once they have all forked, the members of the supervisor's session (2), of
// the orphan's (2), and the supervisor's child in a session of its own (1).
func expected(t *testing.T, supervisor, orphan int) []int {
	t.Helper()
	var want []int
	require.Eventually(t, func() bool {
		procs, err := allProcesses()
		require.NoError(t, err)
		counts := map[string]int{}
		want = nil
		for _, p := range procs {
			var kind string
			switch {
			case p.session == supervisor:
				kind = "supervisor session"
			case p.session == orphan:
				kind = "orphan session"
			case p.ppid == supervisor:
				kind = "own session"
			default:
				continue
			}
			counts[kind]++
			want = append(want, p.pid)
		}
		return counts["supervisor session"] == 2 && counts["orphan session"] == 2 && counts["own session"] == 1
	}, 10*time.Second, 10*time.Millisecond)
	slices.Sort(want)
	return want
}

func TestKillContainersFindsSupervisorsWorkloadsAndTheirSessions(t *testing.T) {
	dir := t.TempDir()
	containerDir := filepath.Join(dir, "root", "process", "containers", "a1")
	require.NoError(t, os.MkdirAll(containerDir, 0o755))

	// A supervisor (by its environment) with a child in its session, and a child of its own
	// in a new session (as the workload is).
	supervisor := startSession(t, "setsid sleep 1000 & sleep 1000 & wait", "VK_STATIC_SUPERVISOR="+containerDir)
	// A workload whose supervisor is gone, found by its state.json, with a child.
	orphan := startSession(t, "sleep 1000 & wait")
	writeState(t, dir, "b2", Workload{State: "running", Pid: orphan.Process.Pid, PidStartTime: startTime(t, orphan.Process.Pid)})
	// Not ours: another directory's supervisor, and a pid recorded with another start time
	// (reused by an unrelated process).
	other := startSession(t, "sleep 1000", "VK_STATIC_SUPERVISOR="+filepath.Join(dir+"-other", "root", "process", "containers", "c3"))
	reused := startSession(t, "sleep 1000")
	writeState(t, dir, "d4", Workload{State: "running", Pid: reused.Process.Pid, PidStartTime: startTime(t, reused.Process.Pid) + 1})

	want := expected(t, supervisor.Process.Pid, orphan.Process.Pid)

	found, err := ContainerProcesses(dir)
	require.NoError(t, err)
	assert.Equal(t, want, pids(found), "%v", found)

	killed, err := KillContainers(dir)
	require.NoError(t, err)
	assert.Equal(t, want, pids(killed))
	left, err := ContainerProcesses(dir)
	require.NoError(t, err)
	assert.Empty(t, left)
	for _, cmd := range []*exec.Cmd{other, reused} {
		assert.NoError(t, cmd.Process.Signal(syscall.Signal(0)), "pid %d was not ours to kill", cmd.Process.Pid)
	}

	ws, err := Workloads(dir)
	require.NoError(t, err)
	assert.Len(t, ws, 2)
	w, err := ContainerWorkload(dir, "process://b2")
	require.NoError(t, err)
	assert.Equal(t, orphan.Process.Pid, w.Pid)
	assert.False(t, w.Running(), "killed")
	_, err = ContainerWorkload(dir, "process://../b2")
	assert.Error(t, err)
}

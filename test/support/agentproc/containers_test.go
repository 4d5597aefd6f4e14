package agentproc

import (
	"encoding/json"
	"fmt"
	"maps"
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

func TestParseStat(t *testing.T) {
	// Fields 4 (ppid), 6 (session) and 22 (start time) counted after the command, which may
	// hold spaces and parentheses.
	fields := func(state string) string {
		return state + " 7 2 9 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21"
	}
	tests := []struct {
		name      string
		stat      string
		want      procInfo
		wantAlive bool
	}{
		{"sleeping", "123 (sleep) " + fields("S"), procInfo{pid: 123, ppid: 7, session: 9, startTime: 4242}, true},
		{"command with ') ('", "123 (a) (b c) " + fields("R"), procInfo{pid: 123, ppid: 7, session: 9, startTime: 4242}, true},
		{"zombie has ended", "123 (sleep) " + fields("Z"), procInfo{}, false},
		{"dead has ended", "123 (sleep) " + fields("X"), procInfo{}, false},
		{"truncated", "123 (sleep) S 1 2", procInfo{}, false},
		{"no command", "garbage", procInfo{}, false},
		{"start time not a number", "123 (sleep) S 7 2 9 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x 20 21", procInfo{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, alive := parseStat(123, tt.stat)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantAlive, alive)
		})
	}
}

// TestFindContainers plays a process provider's containers with real processes: a supervisor
// (its environment names a container directory), the workload its state.json records, a
// state.json whose pid is alive but started at another time (a reused pid), and a supervisor of
// another agent's directory.
func TestFindContainers(t *testing.T) {
	dir := t.TempDir()
	c1 := filepath.Join(dir, "root", "process", "containers", "c1")
	supervisor := startSession(t, "exec sleep 1000", "VK_STATIC_SUPERVISOR="+c1)
	other := startSession(t, "exec sleep 1000", "VK_STATIC_SUPERVISOR="+filepath.Join(dir+"-other", "root", "process", "containers", "x"))
	workload := startSession(t, "exec sleep 1000")
	writeState(t, dir, "c1", Workload{State: "running", Pid: workload.Process.Pid, PidStartTime: startTime(t, workload.Process.Pid)})
	reused := startSession(t, "exec sleep 1000")
	writeState(t, dir, "c2", Workload{State: "running", Pid: reused.Process.Pid, PidStartTime: startTime(t, reused.Process.Pid) + 1})

	c, err := FindContainers(dir, nil)
	require.NoError(t, err)
	assert.Equal(t, map[int]string{supervisor.Process.Pid: c1}, c.Supervisors)
	require.Equal(t, []int{workload.Process.Pid}, slices.Collect(maps.Keys(c.Workloads)))
	assert.Equal(t, c1, c.Workloads[workload.Process.Pid].ContainerDir())
	assert.Len(t, c.Records, 2)
	assert.Equal(t, 2, c.Len())
	assert.NotContains(t, c.Supervisors, other.Process.Pid)
	assert.Equal(t, fmt.Sprintf("supervisor %d (c1), workload %d (c1)", supervisor.Process.Pid, workload.Process.Pid), c.String())

	// The containers are removed with their state files: the workload is still found through
	// the records read before, the supervisor through its environment.
	known := c.Records
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "root")))
	after, err := FindContainers(dir, known)
	require.NoError(t, err)
	assert.Equal(t, c.Supervisors, after.Supervisors)
	assert.Equal(t, c.Workloads, after.Workloads)
	assert.Empty(t, after.Records)
	none, err := FindContainers(dir, nil)
	require.NoError(t, err)
	assert.Empty(t, none.Workloads)

	// A record that cannot be read is an error; the rest is still found.
	writeState(t, dir, "c1", Workload{})
	require.NoError(t, os.WriteFile(filepath.Join(c1, "state.json"), []byte("{"), 0o644))
	broken, err := FindContainers(dir, known)
	assert.Error(t, err)
	assert.Equal(t, c.Supervisors, broken.Supervisors)
	assert.Equal(t, c.Workloads, broken.Workloads)
}

// TestKillContainersThroughKnownRecords: a workload whose container was removed with its record
// (and whose supervisor is gone) is found, and killed, only through the record read before.
func TestKillContainersThroughKnownRecords(t *testing.T) {
	dir := t.TempDir()
	workload := startSession(t, "exec sleep 1000")
	known := Workload{State: "running", Pid: workload.Process.Pid, PidStartTime: startTime(t, workload.Process.Pid)}

	procs, err := ContainerProcesses(dir)
	require.NoError(t, err)
	assert.Empty(t, procs)
	procs, err = ContainerProcesses(dir, known)
	require.NoError(t, err)
	assert.Equal(t, []int{workload.Process.Pid}, pids(procs))

	killed, err := KillContainers(dir, known)
	require.NoError(t, err)
	assert.Equal(t, []int{workload.Process.Pid}, pids(killed))
	assert.False(t, known.Running(), "killed")
}

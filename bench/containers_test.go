package bench

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStatStart(t *testing.T) {
	// Field 22 is the 20th after the command; the command may hold spaces and parentheses.
	fields := func(state string) string {
		return state + " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20 21"
	}
	tests := []struct {
		name      string
		stat      string
		wantStart uint64
		wantAlive bool
	}{
		{"sleeping", "123 (sleep) " + fields("S"), 4242, true},
		{"command with ') ('", "123 (a) (b c) " + fields("R"), 4242, true},
		{"zombie has ended", "123 (sleep) " + fields("Z"), 0, false},
		{"dead has ended", "123 (sleep) " + fields("X"), 0, false},
		{"truncated", "123 (sleep) S 1 2", 0, false},
		{"no command", "garbage", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, alive := parseStatStart(tt.stat)
			require.Equal(t, tt.wantStart, start)
			require.Equal(t, tt.wantAlive, alive)
		})
	}
}

func TestParsePss(t *testing.T) {
	rollup := "55d0c0000000-7ffd000000 ---p 00000000 00:00 0    [rollup]\nRss:               45000 kB\nPss:                1234 kB\nPss_Anon:           1000 kB\n"
	pss, err := parsePss(rollup)
	require.NoError(t, err)
	require.Equal(t, int64(1234*1024), pss)
	_, err = parsePss("Rss: 1 kB\n")
	require.Error(t, err)
}

func TestMedianSumMax(t *testing.T) {
	tests := []struct {
		name              string
		v                 []float64
		median, sum, maxV float64
	}{
		{"none", nil, 0, 0, 0},
		{"odd count, unsorted", []float64{3, 1, 2}, 2, 6, 3},
		{"even count takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5, 10, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.median, median(tt.v))
			require.Equal(t, tt.sum, sum(tt.v))
			require.Equal(t, tt.maxV, maxOf(tt.v))
		})
	}
}

// startSleep starts `sleep 60` with env added, as the leader of a process group of its own
// (as the process provider starts workloads); the test kills it at the end.
func startSleep(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func writeState(t *testing.T, dir string, st containerState) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	data, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), data, 0o644))
}

// TestFindContainerProcs plays a process provider's containers with real processes: a
// "supervisor" (its environment names a container directory), the "workload" its state.json
// records, a state.json whose pid is alive but started at another time (a reused pid), and a
// supervisor of another agent's directory.
func TestFindContainerProcs(t *testing.T) {
	root := t.TempDir()
	dir := containersDir(root)
	c1 := filepath.Join(dir, "c1")
	sup := startSleep(t, supervisorEnv+"="+c1)
	other := startSleep(t, supervisorEnv+"="+filepath.Join(t.TempDir(), "root", "process", "containers", "x"))
	work := startSleep(t)
	start, alive := procStartTime(work.Process.Pid)
	require.True(t, alive)
	writeState(t, c1, containerState{State: "running", SupervisorPID: sup.Process.Pid, Pid: work.Process.Pid, PidStartTime: start})
	reused := startSleep(t)
	writeState(t, filepath.Join(dir, "c2"), containerState{State: "running", Pid: reused.Process.Pid, PidStartTime: 1})

	procs, err := findContainerProcs(dir, nil)
	require.NoError(t, err)
	require.Equal(t, map[int]string{sup.Process.Pid: c1}, procs.Supervisors)
	require.Equal(t, map[int]string{work.Process.Pid: c1}, procs.Workloads)
	require.Len(t, procs.States, 2)
	require.Equal(t, 2, procs.count())
	require.NotContains(t, procs.Supervisors, other.Process.Pid)
	require.Contains(t, procs.String(), "supervisor "+strconv.Itoa(sup.Process.Pid)+" (c1)")
	require.Equal(t, "supervisor "+strconv.Itoa(sup.Process.Pid)+" (c1) and 1 more", procs.summary(1))

	// The container is removed with its state file: the workload is still found through the
	// states read before.
	known := procs.States
	require.NoError(t, os.RemoveAll(dir))
	procs, err = findContainerProcs(dir, known)
	require.NoError(t, err)
	require.Equal(t, map[int]string{work.Process.Pid: c1}, procs.Workloads)

	// kill ends them all; another agent's supervisor is left alone.
	procs.Supervisors[sup.Process.Pid] = c1
	procs.kill()
	require.Eventually(t, func() bool {
		// Not reaped until cleanup: a zombie has ended, and is not counted.
		p, err := findContainerProcs(dir, known)
		return err == nil && p.count() == 0
	}, 10*time.Second, 20*time.Millisecond)
	_, alive = procStartTime(other.Process.Pid)
	require.True(t, alive, "another agent's supervisor was killed")
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/test/support/agentproc"
)

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

func TestFirstProcesses(t *testing.T) {
	procs := []agentproc.ContainerProcess{
		{Pid: 10, Session: 10, Command: "vk-static-supervisor"},
		{Pid: 11, Session: 11, Command: "sleep 3600"},
		{Pid: 12, Session: 12, Command: "vk-static-supervisor"},
	}
	tests := []struct {
		name  string
		procs []agentproc.ContainerProcess
		limit int
		want  string
	}{
		{"none", nil, 4, ""},
		{"all within the limit", procs, 3, "pid 10 (session 10): vk-static-supervisor, pid 11 (session 11): sleep 3600, pid 12 (session 12): vk-static-supervisor"},
		{"more than the limit", procs, 1, "pid 10 (session 10): vk-static-supervisor, and 2 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, firstProcesses(tt.procs, tt.limit))
		})
	}
}

// startSleep starts `sleep 60` with env added; the test kills and reaps it in any case (a
// process killed before is a zombie until then, and counts as ended).
func startSleep(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), env...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestLeftoversAreReportedAndKilled plays what process-100 checks after removing its pods: a
// supervisor and the workload its container recorded outlive the container's directory. The
// watch reports both as left over, the session's clean-up kills them, and a watch then sees
// them gone.
func TestLeftoversAreReportedAndKilled(t *testing.T) {
	dir := t.TempDir()
	container := filepath.Join(dir, "root", "process", "containers", "c1")
	supervisor := startSleep(t, "VK_STATIC_SUPERVISOR="+container)
	workload := startSleep(t)
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", workload.Process.Pid))
	require.NoError(t, err)
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	record, err := json.Marshal(map[string]any{"state": "running", "pid": workload.Process.Pid, "pidStartTime": json.Number(fields[19])})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(container, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(container, "state.json"), record, 0o644))

	var log bytes.Buffer
	s := &session{r: &Runner{Log: &log}, name: "t", agent: &agentProcess{Agent: &agentproc.Agent{Dir: dir}}}
	found, err := agentproc.FindContainers(dir, nil)
	require.NoError(t, err)
	require.Equal(t, 2, found.Len(), "%v", found)
	known := found.Records
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "root"))) // the container takes its record with it

	at, left := s.watchContainersGone(context.Background(), known)(300 * time.Millisecond)
	require.True(t, at.IsZero())
	require.Equal(t, fmt.Sprintf("supervisor %d (c1), workload %d (c1)", supervisor.Process.Pid, workload.Process.Pid), left.String())

	s.workloads = known
	err = s.killContainers()
	require.Contains(t, log.String(), "t: killed 2 container processes left by the agent: ")
	require.ErrorContains(t, err, "2 container processes left when the run ended (killed): ", "a leak fails the run")
	require.NoError(t, s.killContainers(), "nothing left to kill")
	at, left = s.watchContainersGone(context.Background(), known)(10 * time.Second)
	require.False(t, at.IsZero(), "left: %v", left)
	require.Zero(t, left.Len())
}

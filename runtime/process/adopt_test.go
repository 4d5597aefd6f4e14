package process

import (
	"bufio"
	"context"
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
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// A restarted agent (a second Runtime on the same StateDir) finds the running container, stops
// it and hears of its exit.
func TestReadoption(t *testing.T) {
	dir := t.TempDir()
	first := newTestRuntime(t, Config{StateDir: dir})
	id := run(t, first, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}, Labels: map[string]string{"app": "x"}})
	before := status(t, first, id)
	st, err := records.ReadState(first.containerDir(id))
	require.NoError(t, err)
	require.NoError(t, first.Close()) // the state directory is one Runtime's at a time

	second := newTestRuntime(t, Config{StateDir: dir})
	events := make(chan lifecycle.ContainerEvent, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	second.NotifyContainers(ctx, func(ev lifecycle.ContainerEvent) { events <- ev })

	list, err := second.ListContainers(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, id, list[0].ID)
	assert.Equal(t, lifecycle.ContainerRunning, list[0].State)
	assert.True(t, before.StartedAt.Equal(list[0].StartedAt))
	assert.Equal(t, map[string]string{"app": "x"}, list[0].Labels)

	require.NoError(t, second.StopContainer(context.Background(), id, 5*time.Second))
	ev := <-events
	assert.Equal(t, lifecycle.ContainerExitedEvent, ev.Type)
	assert.Equal(t, id, ev.ContainerID)
	s := status(t, second, id)
	assert.Equal(t, int32(143), s.ExitCode)
	// The closed first runtime, the supervisor's parent, no longer reaps it: do it here.
	var ws syscall.WaitStatus
	_, err = syscall.Wait4(st.SupervisorPID, &ws, 0, nil)
	require.NoError(t, err)
}

// A second Runtime on a state directory in use fails, naming it, and touches nothing in it —
// it would remove the directories the first is making (removeUnrecorded) — until the first
// closes.
func TestStateDirIsOneRuntimes(t *testing.T) {
	dir := t.TempDir()
	first := newTestRuntime(t, Config{StateDir: dir})
	making := filepath.Join(dir, containersDir, newID()) // no config.json yet
	require.NoError(t, os.Mkdir(making, 0o700))

	_, err := New(Config{StateDir: dir})
	require.ErrorIs(t, err, ErrStateDirInUse)
	assert.Contains(t, err.Error(), dir)
	assert.DirExists(t, making, "the first runtime's directory in the making")

	require.NoError(t, first.Close())
	require.NoError(t, first.Close(), "Close twice")
	second := newTestRuntime(t, Config{StateDir: dir})
	_, err = os.Stat(making)
	assert.True(t, os.IsNotExist(err), "the next runtime removes what has no record: %v", err)
	_, err = New(Config{StateDir: dir})
	require.ErrorIs(t, err, ErrStateDirInUse)
	require.NoError(t, second.Close())
}

// Killing the agent (-9) leaves the supervisor and the workload running; the next agent takes
// the container up.
func TestSupervisorOutlivesTheAgent(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	require.NoError(t, err)
	agent := exec.Command(self)
	agent.Env = append(os.Environ(), agentChildEnv+"="+dir)
	stdout, err := agent.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, agent.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	id := strings.TrimSpace(line)
	require.NoError(t, validID(id), "the agent said %q", line)
	st, err := records.ReadState(filepath.Join(dir, containersDir, id))
	require.NoError(t, err)
	require.NotNil(t, st)

	require.NoError(t, agent.Process.Signal(syscall.SIGKILL))
	_ = agent.Wait()

	require.NoError(t, procfs.SameProcess(st.Pid, st.PidStartTime), "the workload runs on")
	require.NoError(t, syscall.Kill(st.SupervisorPID, 0), "the supervisor runs on")
	logSize := func() int64 {
		fi, err := os.Stat(dirLog(dir))
		require.NoError(t, err)
		return fi.Size()
	}
	size := logSize()
	require.Eventually(t, func() bool { return logSize() > size }, waitFor, tick, "the log keeps growing")

	r := newTestRuntime(t, Config{StateDir: dir})
	s := status(t, r, id)
	assert.Equal(t, lifecycle.ContainerRunning, s.State)
	require.NoError(t, r.StopContainer(context.Background(), id, 5*time.Second))
	s = status(t, r, id)
	assert.Equal(t, lifecycle.ContainerExited, s.State)
	assert.Equal(t, int32(143), s.ExitCode)
}

// A supervisor killed while its workload runs: the workload is killed and the container
// recorded as lost, whether the runtime watches it then or only learns of it when it starts.
func TestSupervisorLost(t *testing.T) {
	for _, watching := range []bool{true, false} {
		name := map[bool]string{true: "while watched", false: "found by a new runtime"}[watching]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			r := newTestRuntime(t, Config{StateDir: dir})
			id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sleep", "1000"}})
			st, err := records.ReadState(r.containerDir(id))
			require.NoError(t, err)
			if !watching {
				require.NoError(t, r.Close())
			}
			require.NoError(t, syscall.Kill(st.SupervisorPID, syscall.SIGKILL))
			if !watching {
				// The closed runtime no longer reaps its child: do it here.
				var ws syscall.WaitStatus
				_, err := syscall.Wait4(st.SupervisorPID, &ws, 0, nil)
				require.NoError(t, err)
				r = newTestRuntime(t, Config{StateDir: dir})
			}
			require.Eventually(t, func() bool { return status(t, r, id).State == lifecycle.ContainerExited }, 2*time.Second, tick, "%+v", status(t, r, id))
			s := status(t, r, id)
			assert.Equal(t, "SupervisorLost", s.Reason)
			assert.Equal(t, int32(255), s.ExitCode)
			require.Eventually(t, func() bool { return procfs.SameProcess(st.Pid, st.PidStartTime) != nil }, waitFor, tick, "the workload is killed")
		})
	}
}

// A sandbox or container directory without its record — the first record, not synced into its
// directory, lost to a power cut (records.WriteJSONNew), or an agent killed between the two —
// is removed by the next Runtime on the state directory; the recorded ones are kept.
func TestDirectoriesWithoutRecordRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	first := newTestRuntime(t, Config{StateDir: dir})
	sb := sandbox(t, first)
	id, err := first.CreateContainer(context.Background(), sb, &lifecycle.ContainerConfig{Name: "c", Command: []string{"true"}})
	require.NoError(t, err)
	first.Close()

	lostSandbox := filepath.Join(dir, sandboxesDir, newID())
	lostContainer := filepath.Join(dir, containersDir, newID())
	for _, d := range []string{lostSandbox, lostContainer} {
		require.NoError(t, os.Mkdir(d, 0o700))
		// A temporary file whose rename did not reach the disk.
		require.NoError(t, os.WriteFile(filepath.Join(d, ".record.tmp123"), []byte("{"), 0o600))
	}
	notOurs := filepath.Join(dir, containersDir, "not-an-id")
	require.NoError(t, os.Mkdir(notOurs, 0o700))

	second := newTestRuntime(t, Config{StateDir: dir})
	for _, d := range []string{lostSandbox, lostContainer} {
		_, err := os.Stat(d)
		assert.True(t, os.IsNotExist(err), "%s removed: %v", d, err)
	}
	assert.DirExists(t, notOurs, "only directories named by the runtime's ids are its own")
	_, err = second.loadSandbox(sb)
	require.NoError(t, err)
	s := status(t, second, id)
	assert.Equal(t, lifecycle.ContainerCreated, s.State)
}

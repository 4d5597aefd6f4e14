package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// tinyStateDir is a state directory on a tmpfs of its own with few inodes, which the test can
// use up (fillInodes) so that no new file — state.json's temporary file — can be made there,
// while files already open can still be written.
func tinyStateDir(t *testing.T) string {
	t.Helper()
	requireRoot(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m,nr_inodes=64"); err != nil {
		t.Skipf("mounting tmpfs is not permitted here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fillInodes creates files in dir until the file system has no inode left; the returned
// function removes them.
func fillInodes(t *testing.T, dir string) (free func()) {
	t.Helper()
	var made []string
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf("filler-%d", i))
		f, err := os.Create(name)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		require.NoError(t, err)
		f.Close()
		made = append(made, name)
		require.Less(t, i, 1000, "the file system never ran out of inodes")
	}
	return func() {
		for _, name := range made {
			require.NoError(t, os.Remove(name))
		}
	}
}

// A supervisor that cannot write the workload's end to state.json logs it instead: the runtime
// reports the workload's own exit code (reason EndNotRecorded), never "supervisor lost", and a
// restarted agent records it once it can.
func TestEndNotRecordedKeepsTheExitCode(t *testing.T) {
	state := tinyStateDir(t)
	r := newTestRuntime(t, Config{StateDir: state})
	// Where the workload, not root, can see it.
	shared, err := os.MkdirTemp("", "release-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(shared) })
	require.NoError(t, os.Chmod(shared, 0o755))
	release := filepath.Join(shared, "release")
	id := run(t, r, lifecycle.ContainerConfig{Command: []string{"sh", "-c", "until [ -e " + release + " ]; do sleep 0.02; done; exit 3"}})
	free := fillInodes(t, state)
	require.NoError(t, os.WriteFile(release, nil, 0o644))

	s := waitExited(t, r, id)
	var onDisk *records.State
	assert.Equal(t, int32(3), s.ExitCode, "the workload's exit code")
	assert.Equal(t, records.ReasonEndNotRecorded, s.Reason)
	assert.Contains(t, s.Message, "could not record this end")
	onDisk, err = records.ReadState(r.containerDir(id))
	require.NoError(t, err)
	assert.Equal(t, records.StateRunning, onDisk.State, "state.json could not be written")

	// The next agent, with room to write, records the logged end.
	r.Close()
	free()
	r2 := newTestRuntime(t, Config{StateDir: state})
	s = status(t, r2, id)
	assert.Equal(t, lifecycle.ContainerExited, s.State)
	assert.Equal(t, int32(3), s.ExitCode)
	assert.Equal(t, records.ReasonEndNotRecorded, s.Reason)
	onDisk, err = records.ReadState(r2.containerDir(id))
	require.NoError(t, err)
	assert.Equal(t, int32(3), onDisk.ExitCode, "recorded")
	require.NoError(t, r2.RemoveContainer(context.Background(), id))
}

// A start that fails and cannot be recorded either (no room for the supervisor's log or
// state.json) is still reported as the start error it was, not as a container never started.
func TestStartErrorNotRecordedIsStillReported(t *testing.T) {
	state := tinyStateDir(t)
	r := newTestRuntime(t, Config{StateDir: state})
	id := create(t, r, lifecycle.ContainerConfig{Command: []string{"true"}})
	free := fillInodes(t, state)
	defer free()

	err := r.StartContainer(context.Background(), id)
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.ErrorContains(t, err, "record its end")
	s := status(t, r, id)
	assert.Equal(t, lifecycle.ContainerExited, s.State, "not Created: it was started and failed")
	assert.Equal(t, ReasonStartError, s.Reason)
	assert.Equal(t, int32(records.StartErrorExitCode), s.ExitCode)
	assert.Error(t, r.StartContainer(context.Background(), id), "a container starts once")
	require.NoError(t, r.RemoveContainer(context.Background(), id))
}

package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/test/support/syncbuf"
)

// A volume mounted over a parent of the state directory and the log (an emptyDir at /tmp while
// both are under /tmp) hides them in the container's mount namespace. The supervisor reaches them
// through descriptors opened before the mounts: the start and the end are recorded, the log is
// written and rotated, exec works; without that the container stayed Created forever.
func TestMountHidingTheStateDir(t *testing.T) {
	requireRoot(t)
	r := newTestRuntime(t, Config{LogMaxSize: 200, LogMaxFiles: 2})
	require.True(t, strings.HasPrefix(r.cfg.StateDir, "/tmp/"), "the test needs its state under /tmp: %s", r.cfg.StateDir)
	scratch := t.TempDir()
	require.NoError(t, os.Chmod(scratch, 0o777)) // the workload runs as nobody
	logPath := filepath.Join(t.TempDir(), "c.log")
	id := run(t, r, lifecycle.ContainerConfig{
		Command: []string{"sh", "-c", `ls -A /tmp | wc -l; for i in $(seq 20); do echo "line $i of the log, rotated at 200 bytes"; done; while [ ! -e /tmp/go ]; do sleep 0.02; done; echo finish > /tmp/done; exit 3`},
		Mounts:  []lifecycle.Mount{{HostPath: scratch, ContainerPath: "/tmp"}},
		LogPath: logPath,
	})
	s := status(t, r, id)
	require.Equal(t, lifecycle.ContainerRunning, s.State, "%+v", s)

	// Exec runs in the container's mounts: it sees the empty volume at /tmp.
	var out syncbuf.Buffer
	require.NoError(t, r.Exec(context.Background(), id, []string{"ls", "-A", "/tmp"}, &testAttachIO{stdout: &out, stderr: &out}))
	assert.Empty(t, strings.TrimSpace(out.String()))

	require.NoError(t, os.WriteFile(filepath.Join(scratch, "go"), nil, 0o644))
	s = waitExited(t, r, id)
	assert.Equal(t, int32(3), s.ExitCode, "the end is recorded: %+v", s)
	assert.Empty(t, s.Reason)
	done, err := os.ReadFile(filepath.Join(scratch, "done"))
	require.NoError(t, err)
	assert.Equal(t, "finish\n", string(done))
	rotated, _ := filepath.Glob(logPath + ".*")
	assert.NotEmpty(t, rotated, "the log was rotated where it is, not in the volume")
	inVolume, _ := os.ReadDir(scratch)
	assert.Len(t, inVolume, 2, "only go and done in the volume: %v", inVolume)
}

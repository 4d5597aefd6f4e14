package childproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutputGoesToTheLogAndTee(t *testing.T) {
	log := filepath.Join(t.TempDir(), "child.log")
	var tee strings.Builder
	p, err := Start(Options{Name: "echo", LogPath: log, Tee: &tee, Env: []string{"GREETING=hello"}}, "sh", "-c", `echo "$GREETING"`)
	require.NoError(t, err)
	require.Eventually(t, p.Exited, 10*time.Second, 10*time.Millisecond)
	assert.NoError(t, p.Err())
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(data))
	assert.Equal(t, "hello\n", tee.String())
}

func TestStopEndsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild.pid")
	// Only a signal to the group reaches the grandchild.
	p, err := Start(Options{Name: "sh", LogPath: filepath.Join(dir, "log"), Group: true},
		"sh", "-c", "sleep 60 & echo $! > "+pidFile+"; wait")
	require.NoError(t, err)
	var grandchild int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil || len(data) == 0 {
			return false
		}
		_, err = fmt.Sscan(string(data), &grandchild)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	p.Stop(5 * time.Second)
	assert.True(t, p.Exited())
	assert.Error(t, p.Err(), "ended by a signal")
	require.Eventually(t, func() bool { return !alive(grandchild) }, 10*time.Second, 10*time.Millisecond, "grandchild %d stopped with the group", grandchild)
}

func TestStopZeroKillsAtOnce(t *testing.T) {
	p, err := Start(Options{Name: "sh", LogPath: filepath.Join(t.TempDir(), "log")},
		"sh", "-c", "trap '' TERM; sleep 60")
	require.NoError(t, err)
	p.Stop(0)
	assert.True(t, p.Exited())
	var nilProcess *Process
	nilProcess.Stop(time.Second) // a nil process is stopped already
}

// alive reports whether pid runs (a zombie, dead but not yet reaped, does not).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}

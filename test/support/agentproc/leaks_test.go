package agentproc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a TestingT that keeps what it was told.
type recorder struct{ errors []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// A container process left running fails the test that left it, naming it, and is killed.
func TestFailOnLeaksFailsTheTestAndKills(t *testing.T) {
	dir := t.TempDir()
	containerDir := filepath.Join(dir, "root", "process", "containers", "a1")
	require.NoError(t, os.MkdirAll(containerDir, 0o755))
	supervisor := startSession(t, "exec sleep 1000", "VK_STATIC_SUPERVISOR="+containerDir) // one process

	var r recorder
	FailOnLeaks(&r, dir)
	require.Len(t, r.errors, 1, "%q", r.errors)
	assert.Contains(t, r.errors[0], "1 container processes were left running when the test ended")
	assert.Contains(t, r.errors[0], fmt.Sprint(supervisor.Process.Pid))
	left, err := ContainerProcesses(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "killed")

	// Nothing left: nothing to say.
	r = recorder{}
	FailOnLeaks(&r, dir)
	assert.Empty(t, r.errors, "%s", strings.Join(r.errors, "; "))
}

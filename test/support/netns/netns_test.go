package netns

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A child that was never re-executed by Command is refused: Enter must not touch the
// namespaces of a process that may be in the machine's.
func TestEnterOutsideAChild(t *testing.T) {
	t.Setenv(parentEnv, "")
	err := Enter(NodeIP)
	require.Error(t, err)
	assert.Contains(t, err.Error(), parentEnv)
}

// In the parent's own namespaces (here: this test's parent pid is in the same ones) Enter
// refuses before changing anything.
func TestEnterInTheParentsNamespaces(t *testing.T) {
	t.Setenv(parentEnv, "1")
	if same, err := sameNamespace(1, "net"); err != nil || !same {
		t.Skip("this test runs in a network namespace of its own; pid 1 is elsewhere")
	}
	err := Enter(NodeIP)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not in a net namespace of its own")
}

func TestCommand(t *testing.T) {
	cmd, err := Command([]string{"-x"}, "A=b")
	require.NoError(t, err)
	assert.Equal(t, []string{"-x"}, cmd.Args[1:])
	assert.Contains(t, cmd.Env, "A=b")
	assert.Equal(t, uintptr(syscall.CLONE_NEWNET|syscall.CLONE_NEWNS), cmd.SysProcAttr.Cloneflags)
	assert.Equal(t, syscall.SIGKILL, cmd.SysProcAttr.Pdeathsig)
}

func TestExitCode(t *testing.T) {
	code, err := ExitCode(nil)
	assert.NoError(t, err)
	assert.Equal(t, 0, code)

	code, err = ExitCode(exec.Command("sh", "-c", "exit 3").Run())
	assert.NoError(t, err)
	assert.Equal(t, 3, code)

	code, err = ExitCode(exec.Command("sh", "-c", "kill -9 $$").Run())
	assert.NoError(t, err)
	assert.Equal(t, 1, code)

	_, err = ExitCode(&exec.Error{Name: "x", Err: syscall.EPERM})
	assert.ErrorContains(t, err, "CAP_SYS_ADMIN")
	_, err = ExitCode(errors.New("boom"))
	assert.ErrorContains(t, err, "boom")
}

// KillLeft kills only the processes of the namespace named: here a made-up one, which holds
// none (this test must never kill anything of the machine's).
func TestKillLeftElsewhere(t *testing.T) {
	own, err := NetNamespace(os.Getpid())
	require.NoError(t, err)
	assert.Regexp(t, `^net:\[\d+\]$`, own)
	killed, err := KillLeft("net:[1]")
	assert.NoError(t, err)
	assert.Empty(t, killed)
}

func TestKillLeftRefusesItsOwnNamespace(t *testing.T) {
	own, err := NetNamespace(os.Getpid())
	require.NoError(t, err)
	_, err = KillLeft(own)
	assert.ErrorContains(t, err, "own network namespace")
}

package sources

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// asNobodyEnv selects the child mode of runAsNobody: it names the test the child runs.
const asNobodyEnv = "VK_STATIC_TEST_AS_NOBODY"

// nobody is the unprivileged user (and group) the child runs as.
const nobody = 65534

// runAsNobody makes the calling test run as an unprivileged user, for a check that root passes
// whatever the code does (root lists any directory), while CI runs the tests as root. As root it
// runs the test again in a child process of this test binary, judges the child (it must have
// run the test, and the test must have passed) and returns true: the caller returns at once.
// In that child, and whenever the tests already run unprivileged, it returns false and the
// caller's body runs.
//
// The child starts as root and drops to nobody itself (setgroups, setgid, setuid, which Go
// applies to every thread), rather than being started with a credential of nobody: the test
// binary lies in the go command's work directory, which only root may traverse, so nobody
// could not execute it. Its temporary directory is one of nobody's own.
func runAsNobody(t *testing.T) (parent bool) {
	t.Helper()
	if os.Getenv(asNobodyEnv) == t.Name() {
		if os.Geteuid() == 0 {
			require.NoError(t, syscall.Setgroups(nil))
			require.NoError(t, syscall.Setgid(nobody))
			require.NoError(t, syscall.Setuid(nobody))
		}
		require.NotZero(t, os.Geteuid(), "the child must not run as root")
		return false
	}
	if os.Geteuid() != 0 {
		return false
	}
	tmp, err := os.MkdirTemp("", "vk-static-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	require.NoError(t, os.Chown(tmp, nobody, nobody))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), asNobodyEnv+"="+t.Name(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as uid %d: %v\n%s", t.Name(), nobody, err, out)
	}
	// A child that ran no test exits 0 too: it must say that this one passed.
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Fatalf("%s as uid %d did not run:\n%s", t.Name(), nobody, out)
	}
	t.Logf("ran as uid %d in a child process:\n%s", nobody, out)
	return true
}

package api

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	clocktesting "k8s.io/utils/clock/testing"
)

// fileWatch runs watchFiles on files with a fake clock until the test ends, checking that it
// returns and leaves nothing running; changes receives a value per call of changed.
type fileWatch struct {
	clock   *clocktesting.FakeClock
	changes chan struct{}
}

func startFileWatch(t *testing.T, files ...string) *fileWatch {
	t.Helper()
	baseline := goleak.IgnoreCurrent()
	w := &fileWatch{clock: clocktesting.NewFakeClock(time.Now()), changes: make(chan struct{}, 100)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchFiles(ctx, w.clock, time.Minute, files, func() { w.changes <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("watchFiles did not return")
		}
		verifyNoLeaks(t, baseline)
	})
	w.changed(t, "the first call, at the start")
	return w
}

// changed waits for a call of changed.
func (w *fileWatch) changed(t *testing.T, why string) {
	t.Helper()
	select {
	case <-w.changes:
	case <-time.After(10 * time.Second):
		t.Fatalf("changed was not called: %s", why)
	}
}

// drain forgets the calls so far and those still coming: a write is one or more events, the
// last of which may come a moment after the first.
func (w *fileWatch) drain() {
	for {
		select {
		case <-w.changes:
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

// quiet fails when changed is called within a short while.
func (w *fileWatch) quiet(t *testing.T, why string) {
	t.Helper()
	select {
	case <-w.changes:
		t.Fatalf("changed was called: %s", why)
	case <-time.After(200 * time.Millisecond):
	}
}

// recheck steps the fake clock past the recheck interval once the ticker waits on it.
func (w *fileWatch) recheck(t *testing.T) {
	t.Helper()
	require.Eventually(t, w.clock.HasWaiters, 10*time.Second, time.Millisecond)
	w.clock.Step(time.Minute)
}

// A file written, or replaced by a rename over it (as tools write files atomically), is a call;
// the file that replaced another is watched in turn.
func TestWatchFilesEvents(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tls.crt")
	require.NoError(t, os.WriteFile(file, []byte("one"), 0o600))
	w := startFileWatch(t, file)

	require.NoError(t, os.WriteFile(file, []byte("two"), 0o600))
	w.changed(t, "written")
	w.drain()

	tmp := filepath.Join(dir, "tls.crt.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte("three"), 0o600))
	w.quiet(t, "another file of the directory")
	require.NoError(t, os.Rename(tmp, file))
	w.changed(t, "renamed over")
	w.drain()

	require.NoError(t, os.WriteFile(file, []byte("four"), 0o600))
	w.changed(t, "the new file written")
}

// What sends no event — a symlink re-pointed, the way a secret volume swaps its ..data — is
// seen at the next recheck; a file missing at the start is watched once it is there.
func TestWatchFilesRecheck(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, d), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, d, "ca.crt"), []byte(d), 0o600))
	}
	require.NoError(t, os.Symlink("a", filepath.Join(dir, "data")))
	linked := filepath.Join(dir, "data", "ca.crt")
	missing := filepath.Join(dir, "later.crt")
	w := startFileWatch(t, linked, missing)

	tmp := filepath.Join(dir, "data.tmp")
	require.NoError(t, os.Symlink("b", tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "data")))
	w.quiet(t, "no event for a re-pointed symlink")
	w.recheck(t)
	w.changed(t, "the recheck")

	require.NoError(t, os.WriteFile(missing, []byte("x"), 0o600))
	w.quiet(t, "not watched before the recheck")
	w.recheck(t)
	w.changed(t, "the recheck")
	w.drain()
	require.NoError(t, os.WriteFile(missing, []byte("y"), 0o600))
	w.changed(t, "watched since the recheck")
}

package api

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// leakWait is how long verifyNoLeaks lets goroutines that are ending finish.
const leakWait = 10 * time.Second

// verifyNoLeaks fails t when goroutines besides those opts ignore are still running once the
// ones on their way out have had leakWait to end. goleak.VerifyNone alone gives them under half a
// second (20 retries, the last ones 100 ms apart), which a loaded machine running the race
// detector exceeds: a handler's goroutines end just after its connection closes. A goroutine
// that does not end still fails the test, after leakWait (TestLeakCheckFails).
func verifyNoLeaks(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	if err := findLeaks(opts...); err != nil {
		t.Error(err)
	}
}

// findLeaks is goleak.Find, polled until it finds nothing or leakWait has passed.
func findLeaks(opts ...goleak.Option) error {
	deadline := time.Now().Add(leakWait)
	for {
		err := goleak.Find(opts...) // itself retries for up to ~0.4 s
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still running after %s: %w", leakWait, err)
		}
	}
}

// TestMain fails the package's tests when any goroutine is still running once they are done,
// besides the per-test checks (newRouteEnv, serve): a leak from a test without them, or one
// that outlives its test's own check, is caught here. The fuzzing engine runs a signal watcher
// of its own in each worker.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := findLeaks(goleak.IgnoreTopFunction("os/signal.NotifyContext.func1")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// The check still fails on a goroutine that does not end, and passes once it has ended.
func TestLeakCheckFails(t *testing.T) {
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		<-stop
	}()
	ft := &fakeT{}
	start := time.Now()
	verifyNoLeaks(ft)
	if !ft.failed {
		t.Error("a goroutine that never ends passed the leak check")
	}
	if waited := time.Since(start); waited < leakWait {
		t.Errorf("failed after %s, before the %s it lets goroutines end", waited, leakWait)
	}
	close(stop)
	<-ended
	verifyNoLeaks(t)
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()           {}
func (f *fakeT) Error(args ...any) { f.failed = true }

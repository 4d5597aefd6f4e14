package api

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any goroutine is still running once they are done,
// besides the per-test checks (newRouteEnv, serve): a leak from a test without them, or one
// that outlives its test's own check, is caught here. The fuzzing engine runs a signal watcher
// of its own in each worker.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("os/signal.NotifyContext.func1"))
}

package agentproc

// TestingT is the part of *testing.T that FailOnLeaks reports to.
type TestingT interface {
	Helper()
	Errorf(format string, args ...any)
}

// FailOnLeaks is a test's clean-up of last resort for the agents under dir, once they are
// stopped: it kills every container process still running for them (KillContainers) and fails
// the test for each — a container that outlives its test is a leak of that test, not something
// to log and forget (on a machine shared by many test runs it would also run on until the next
// reboot). A test that removes its pods waits for their processes to end before it returns.
func FailOnLeaks(t TestingT, dir string, known ...Workload) {
	t.Helper()
	killed, err := KillContainers(dir, known...)
	if err != nil {
		t.Errorf("killing the container processes left under %s: %v", dir, err)
	}
	if len(killed) > 0 {
		t.Errorf("%d container processes were left running when the test ended (killed now): %v", len(killed), killed)
	}
}

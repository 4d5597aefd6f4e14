package netns

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Run runs this executable again with args (and env added) in network and mount namespaces of
// its own (Command), passing SIGINT and SIGTERM on to it so that it can clean up, and returns
// its exit code once it has ended and whatever was still in its network namespace then (a
// container runtime's shims, had it died before its clean-up) has been killed (KillLeft):
// leftover is what was killed, which callers report as a failure of the run. err says why the
// child could not be run, or why the namespace could not be emptied.
func Run(args []string, env ...string) (code int, leftover []int, err error) {
	child, err := Command(args, env...)
	if err != nil {
		return 1, nil, err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := child.Start(); err != nil {
		_, err = ExitCode(err)
		return 1, nil, err
	}
	ns, nsErr := NetNamespace(child.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	var waitErr error
wait:
	for {
		select {
		case sig := <-sigs:
			_ = child.Process.Signal(sig)
		case waitErr = <-done:
			break wait
		}
	}
	code, err = ExitCode(waitErr)
	if err != nil {
		return 1, nil, err
	}
	if nsErr != nil {
		return code, nil, fmt.Errorf("the child's network namespace: %w", nsErr)
	}
	leftover, err = KillLeft(ns)
	return code, leftover, err
}

// RunTests is a test package's TestMain for tests that run in namespaces of their own. In the
// parent it calls prepare for what the child needs (built binaries: the environment that names
// them, and a clean-up for after the child), runs the tests again in the child (Run), and fails
// the run for whatever the child left in its network namespace; in the child it runs child,
// which calls Enter first. name prefixes what it prints. It returns the exit code.
func RunTests(name string, prepare func() (env []string, cleanup func(), err error), child func() int) int {
	if InChild() {
		return child()
	}
	env, cleanup, err := prepare()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	defer cleanup()
	code, leftover, err := Run(os.Args[1:], env...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return max(code, 1)
	}
	if len(leftover) > 0 {
		fmt.Fprintf(os.Stderr, "%s: killed %d processes left in the tests' network namespace: %v\n", name, len(leftover), leftover)
		return max(code, 1)
	}
	return code
}

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// launcher starts the supervisor's commands (the workload, execs) from one OS thread whose
// ambient capabilities are cleared. Without root, the supervisor runs in a user namespace with
// CAP_SYS_ADMIN as an ambient capability — it needs it to mount — and ambient capabilities
// pass through execve: started from any other thread, the workload would hold it too. A child
// inherits its credentials from the thread that forks it, and Go forks from the calling
// goroutine's thread, which LockOSThread pins.
type launcher struct {
	starts chan launch
}

type launch struct {
	cmd  *exec.Cmd
	done chan error
}

func newLauncher() *launcher {
	l := &launcher{starts: make(chan launch)}
	go func() {
		// Never unlocked: the thread's credentials are no longer the process's, so it must not
		// run other goroutines, and it ends with the process.
		runtime.LockOSThread()
		_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) // none to clear before Linux 4.3
		for s := range l.starts {
			s.done <- s.cmd.Start()
		}
	}()
	return l
}

// start starts cmd from the launcher's thread.
func (l *launcher) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	l.starts <- launch{cmd: cmd, done: done}
	return <-done
}

// errNotJoined: startInCgroup could not put its thread in the cgroup, and started nothing.
var errNotJoined = errors.New("the launching thread could not join the cgroup")

// startInCgroup starts cmd in the cgroup v1 directories dirs without the init helper: from an
// OS thread of its own that first joins each directory (its tid written to the tasks file —
// v1 moves single threads), so that the child, which the kernel puts in the cgroups of the
// thread that forks it, starts there; the thread then ends with its goroutine (locked and never
// unlocked, Go terminates it), leaving the cgroup, and needs moving back nowhere. The supervisor
// process stays out of the cgroup: only this thread is in it, for the moment of the fork — for
// the workload's start, when nothing of the container can be killed or frozen yet (the runtime
// has not seen it start), so nothing reads the supervisor as one of its processes. Execs keep
// the init helper: a stop may kill the container's cgroup while one starts.
//
// It saves, per container, the init helper's exec of this binary (its Go runtime started again,
// the cgroup joined, the user set through every thread) on the path of every start. When the
// thread cannot join (errNotJoined: not v1, not allowed), nothing was started and the caller
// uses the init helper.
func (l *launcher) startInCgroup(cmd *exec.Cmd, dirs []string) error {
	done := make(chan error, 1)
	var run func()
	run = func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The main thread, which Go never ends (it would stay in the cgroup, and with it the
			// supervisor's pid): hold it, so that another goroutine cannot get it, while that
			// goroutine — on another thread, then — does the start.
			other := make(chan struct{})
			go func() { run(); close(other) }()
			<-other
			runtime.UnlockOSThread()
			return
		}
		// Never unlocked: the thread ends with this goroutine.
		_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) // as the launcher's
		tid := []byte(strconv.Itoa(unix.Gettid()))
		for _, dir := range dirs {
			if err := writeRetryingEINTR(filepath.Join(dir, "tasks"), tid); err != nil {
				done <- fmt.Errorf("%w: %s: %w", errNotJoined, dir, err)
				return
			}
		}
		done <- cmd.Start()
	}
	go run()
	return <-done
}

// cgroupV1Dirs are the distinct directories of the container's cgroup when it is in v1
// hierarchies only (a cgroup v2 directory, "", takes no single thread); nil otherwise.
func cgroupV1Dirs(cgroups map[string]string) []string {
	var dirs []string
	seen := map[string]bool{}
	for name, dir := range cgroups {
		if name == "" {
			return nil
		}
		if !seen[dir] {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	if len(dirs) > 0 {
		if _, err := os.Stat(filepath.Join(dirs[0], "tasks")); err != nil {
			return nil
		}
	}
	return dirs
}

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// launcher starts the supervisor's commands (the workload, execs) from one OS thread whose
// ambient capabilities are cleared. Without root, the supervisor runs in a user namespace with
// CAP_SYS_ADMIN as an ambient capability — it needs it to mount — and ambient capabilities
// pass through execve: started from any other thread, the workload would hold it too. A child
// inherits its credentials from the thread that forks it, and Go forks from the calling
// goroutine's thread, which LockOSThread pins.
//
// The same thread holds what a restricted container's processes start with and the
// supervisor itself must not have: no_new_privs and the pod's namespaces (enterSandbox, run on
// it through do).
type launcher struct {
	starts chan launch
}

// launch is one thing for the launcher's thread to do: start cmd, or call fn.
type launch struct {
	cmd  *exec.Cmd
	fn   func() error
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
			if s.fn != nil {
				s.done <- s.fn()
				continue
			}
			s.done <- s.cmd.Start()
		}
	}()
	return l
}

// do calls fn on the launcher's thread: what it changes of the thread, every later start has.
func (l *launcher) do(fn func() error) error {
	done := make(chan error, 1)
	l.starts <- launch{fn: fn, done: done}
	return <-done
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
// process stays out of the cgroup: it returns only once that thread has exited (waitExit), so
// that nothing after it — the runtime seeing the start, a crash-looping workload's exit, the
// stop that freezes and kills the cgroup's processes — can find the supervisor's pid in the
// cgroup.procs the thread put it in. Execs keep the init helper: a stop may kill the
// container's cgroup while one starts.
//
// It saves, per container, the init helper's exec of this binary (its Go runtime started again,
// the cgroup joined, the user set through every thread) on the path of every start. When the
// thread cannot join (errNotJoined: not v1, not allowed, or the pod's pids.max reached), nothing
// was started and the caller uses the init helper. The thread counts under the pod's pids.max
// while it is in the cgroup, so this start needs one pid more than the helper's (which execs in
// its own place): a fork refused for it (EAGAIN) is errNotJoined too, and cmd is made anew
// (a Cmd starts once) for the helper, which then starts it or reports why as it always does.
func (l *launcher) startInCgroup(cmd *exec.Cmd, dirs []string) error {
	type result struct {
		err  error
		exit *threadExit
	}
	done := make(chan result, 1)
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
		exit := watchThreadExit(unix.Gettid())
		tid := []byte(strconv.Itoa(unix.Gettid()))
		for _, dir := range dirs {
			if err := writeRetryingEINTR(filepath.Join(dir, "tasks"), tid); err != nil {
				done <- result{fmt.Errorf("%w: %s: %w", errNotJoined, dir, err), exit}
				return
			}
		}
		done <- result{cmd.Start(), exit}
	}
	go run()
	res := <-done
	if werr := res.exit.wait(); werr != nil {
		if res.err == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return fmt.Errorf("start in cgroup: %w", werr)
	}
	if errors.Is(res.err, syscall.EAGAIN) {
		*cmd = freshCmd(cmd)
		return fmt.Errorf("%w: fork: %w", errNotJoined, res.err)
	}
	return res.err
}

// freshCmd is cmd as it was made, to start again after a failed Start.
func freshCmd(cmd *exec.Cmd) exec.Cmd {
	return exec.Cmd{
		Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
		Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles,
		SysProcAttr: cmd.SysProcAttr, Cancel: cmd.Cancel, WaitDelay: cmd.WaitDelay,
	}
}

// threadExit waits for a thread of this process to exit, which takes it out of its cgroups
// (cgroup_exit precedes both the pidfd's notification and the /proc entry's removal).
//
// Waiting costs the thread's exit, which it makes anyway, and a wakeup: 18 µs median, 80 µs
// p90, from the receive on done to the pidfd readable (300 starts, a shared 2-core machine;
// bench/results/2026-11-25-0ccce1e-startincgroup-thread-exit.json). The alternative, the thread
// writing its tid back to the supervisor's own cgroups before it signals, costs a migration
// per hierarchy — 105-120 µs median for four tasks files, measured beside it — and needs
// those cgroups' paths.
type threadExit struct {
	tid   int
	pidfd int // a PIDFD_THREAD pidfd (Linux 6.9), readable once the thread exited; -1 without
}

// watchThreadExit is called by the thread itself, so its tid cannot have been reused.
func watchThreadExit(tid int) *threadExit {
	fd, err := unix.PidfdOpen(tid, unix.PIDFD_THREAD)
	if err != nil {
		fd = -1
	}
	return &threadExit{tid: tid, pidfd: fd}
}

// threadExitBound bounds the wait for a thread that is ending: Go ends it as its goroutine
// returns.
const threadExitBound = 10 * time.Second

func (t *threadExit) wait() error {
	if t.pidfd >= 0 {
		defer unix.Close(t.pidfd)
		fds := []unix.PollFd{{Fd: int32(t.pidfd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(threadExitBound/time.Millisecond))
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				return fmt.Errorf("wait for thread %d to exit: %w", t.tid, err)
			case n == 0:
				return fmt.Errorf("thread %d did not exit in %s", t.tid, threadExitBound)
			}
			return nil
		}
	}
	// Before Linux 6.9: its /proc entry, polled with a growing sleep (it is usually gone at
	// the first look: the thread signalled just before it returned).
	task := fmt.Sprintf("/proc/self/task/%d", t.tid)
	sleep := 20 * time.Microsecond
	for deadline := time.Now().Add(threadExitBound); ; {
		if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("thread %d did not exit in %s", t.tid, threadExitBound)
		}
		time.Sleep(sleep)
		sleep = min(2*sleep, 5*time.Millisecond)
	}
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

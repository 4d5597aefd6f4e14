package supervisor

import (
	"os/exec"
	"runtime"

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

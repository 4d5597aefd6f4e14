package childproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Options describe one child process.
type Options struct {
	Name    string    // for errors
	LogPath string    // its standard output and error are appended here (a restart appends)
	Env     []string  // added to the run's environment
	Tee     io.Writer // when not nil, gets a copy of the output too
	// Group makes Stop signal the child's whole process group, so that what it started (ginkgo's
	// e2e.test processes) stops with it; otherwise the child alone is signalled (containerd: its
	// shims and containers must outlive a Kill).
	Group bool
}

// Process is a started child.
type Process struct {
	name  string
	cmd   *exec.Cmd
	group bool
	done  chan struct{} // closed once it has exited; err is set before
	err   error
}

// Start starts argv (the program and its arguments).
func Start(o Options, argv ...string) (*Process, error) {
	log, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out io.Writer = log
	if o.Tee != nil {
		out = io.MultiWriter(log, o.Tee)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if o.Env != nil {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", o.Name, err)
	}
	p := &Process{name: o.Name, cmd: cmd, group: o.Group, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Name is Options.Name.
func (p *Process) Name() string { return p.name }

// Pid is the process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is how the process ended (exec.Cmd.Wait's error), once Exited.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Stop sends SIGTERM and, after grace, SIGKILL (at once when grace is 0); it returns once the
// process has exited. A nil process is stopped already.
func (p *Process) Stop(grace time.Duration) {
	if p == nil {
		return
	}
	if grace > 0 {
		p.signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	p.signal(syscall.SIGKILL)
	<-p.done
}

func (p *Process) signal(sig syscall.Signal) {
	pid := p.cmd.Process.Pid
	if p.group {
		pid = -pid
	}
	_ = syscall.Kill(pid, sig)
}

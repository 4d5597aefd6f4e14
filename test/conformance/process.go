package conformance

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a child of the run (kube-scheduler, the kubelet) whose output goes to a log
// file. It dies with the run (Pdeathsig) even when the run is killed before its clean-up.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed once it has exited; err is set before
	err  error
}

// startProcess starts argv with its output appended to logPath; extra, when not nil, gets a
// copy of it too.
func startProcess(name, logPath string, extra io.Writer, env []string, argv ...string) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var out io.Writer = log
	if extra != nil {
		out = io.MultiWriter(log, extra)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so that stop reaches what it started (ginkgo's e2e.test
	// processes) too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group and, after grace, SIGKILL; it returns once the
// process has exited. A nil process is stopped already.
func (p *process) stop(grace time.Duration) {
	if p == nil {
		return
	}
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-p.done
}

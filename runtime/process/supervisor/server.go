package supervisor

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/pty"
)

// serve answers the runtime's connections on the supervisor's socket until the process exits.
func (s *supervisor) serve(l *net.UnixListener) {
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return
		}
		go s.handle(conn)
	}
}

func (s *supervisor) handle(conn *net.UnixConn) {
	req, files, err := protocol.ReceiveRequest(conn)
	if err != nil {
		conn.Close()
		return
	}
	switch req.Op {
	case protocol.OpWatch:
		s.watch(conn)
	case protocol.OpExec:
		s.exec(conn, req, files)
	case protocol.OpAttach:
		s.attach(conn, req, files)
	default:
		for _, f := range files {
			f.Close()
		}
		writeReply(conn, protocol.Reply{Error: fmt.Sprintf("unknown operation %q", req.Op)})
		conn.Close()
	}
}

func writeReply(conn net.Conn, r protocol.Reply) {
	line, _ := json.Marshal(r)
	_, _ = conn.Write(append(line, '\n'))
}

// watch holds conn until the workload's end is recorded (shutdown closes it), or until the
// client goes. A watch that comes after the workload ended but before its end is recorded is
// held too: its EOF must mean "state.json has the end".
func (s *supervisor) watch(conn *net.UnixConn) {
	s.mu.Lock()
	if s.recorded {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.watchers[conn] = struct{}{}
	s.mu.Unlock()
	_, _ = io.Copy(io.Discard, conn)
	s.mu.Lock()
	delete(s.watchers, conn)
	s.mu.Unlock()
	conn.Close()
}

// exec runs req.Argv with the descriptors passed in files as its stdio and replies with its
// exit code. The client closing the connection first kills the command's process group.
func (s *supervisor) exec(conn *net.UnixConn, req protocol.Request, files []*os.File) {
	defer conn.Close()
	closeFiles := func() {
		for _, f := range files {
			f.Close()
		}
	}
	cmd, err := s.command(req.Argv)
	if err != nil {
		closeFiles()
		writeReply(conn, protocol.Reply{Error: err.Error()})
		return
	}
	for i, name := range req.Fds {
		switch name {
		case protocol.FdStdin:
			cmd.Stdin = files[i]
		case protocol.FdStdout:
			cmd.Stdout = files[i]
		case protocol.FdStderr:
			cmd.Stderr = files[i]
		case protocol.FdTTY:
			cmd.Stdin, cmd.Stdout, cmd.Stderr = files[i], files[i], files[i]
			cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
		}
	}
	s.mu.Lock()
	if s.exited || s.execsRefused != nil {
		s.mu.Unlock()
		closeFiles()
		writeReply(conn, protocol.Reply{Error: "the container is not running"})
		return
	}
	err = s.startInCgroup(cmd) // into the container's cgroup, as runc exec
	if err == nil {
		s.execs[cmd.Process.Pid] = struct{}{}
	}
	s.mu.Unlock()
	closeFiles()
	if err != nil {
		writeReply(conn, protocol.Reply{Error: err.Error()})
		return
	}
	pid := cmd.Process.Pid
	ended := make(chan struct{})
	go func() {
		// The client goes away (its context ended): the command goes too. Ended stops this
		// goroutine once the command is done and the reply written.
		buf := make([]byte, 1)
		_, _ = conn.Read(buf)
		select {
		case <-ended:
		default:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}()
	_ = cmd.Wait()
	s.mu.Lock()
	delete(s.execs, pid)
	s.mu.Unlock()
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	close(ended)
	writeReply(conn, protocol.Reply{ExitCode: code})
}

// attachment is one client attached to the workload's stdio.
type attachment struct {
	conn   net.Conn
	stdout *os.File // the tty's output too
	stderr *os.File
	stdin  *os.File
	once   sync.Once
}

func (a *attachment) closeLocked() {
	a.once.Do(func() {
		for _, f := range []*os.File{a.stdout, a.stderr, a.stdin} {
			if f != nil {
				f.Close()
			}
		}
		a.conn.Close()
	})
}

// toAttached copies a piece of the workload's output to every attached client; one that cannot
// take it (gone) is detached.
func (s *supervisor) toAttached(p []byte, stderr bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for a := range s.attached {
		f := a.stdout
		if stderr {
			f = a.stderr
		}
		if f == nil {
			continue
		}
		if _, err := f.Write(p); err != nil {
			delete(s.attached, a)
			a.closeLocked()
		}
	}
}

// attach connects the passed descriptors to the workload: its output goes to them as well as
// to the log, and their input to its stdin. It ends when the workload ends, the client closes
// the connection, or the attached stdin ends; with StdinOnce, the first attach with stdin to end
// closes the workload's stdin.
func (s *supervisor) attach(conn *net.UnixConn, req protocol.Request, files []*os.File) {
	a := &attachment{conn: conn}
	for i, name := range req.Fds {
		f, err := pollable(files[i])
		if err != nil {
			continue
		}
		switch name {
		case protocol.FdStdout:
			a.stdout = f
		case protocol.FdStderr:
			a.stderr = f
		case protocol.FdStdin:
			a.stdin = f
		default:
			f.Close()
		}
	}
	s.mu.Lock()
	if s.exited {
		a.closeLocked()
		s.mu.Unlock()
		return
	}
	s.attached[a] = struct{}{}
	stdin := s.stdin
	s.mu.Unlock()

	done := make(chan struct{}, 2)
	go func() {
		// The client sends terminal sizes until it detaches.
		dec := json.NewDecoder(conn)
		for {
			var size protocol.Resize
			if err := dec.Decode(&size); err != nil {
				break
			}
			if s.master != nil {
				_ = pty.SetWinsize(s.master, size.Width, size.Height)
			}
		}
		done <- struct{}{}
	}()
	if a.stdin != nil && stdin != nil {
		go func() {
			_, _ = io.Copy(stdin, a.stdin)
			done <- struct{}{}
		}()
	}
	<-done
	s.mu.Lock()
	delete(s.attached, a)
	a.closeLocked()
	if a.stdin != nil && s.stdin != nil && s.rec.Config.StdinOnce {
		s.closeStdinLocked()
	}
	s.mu.Unlock()
}

// closeStdinLocked ends the workload's input: closes its stdin pipe, or, on a terminal (whose
// master also carries the output), sends end-of-file (^D).
func (s *supervisor) closeStdinLocked() {
	if s.rec.Config.TTY {
		_, _ = s.stdin.Write([]byte{4})
	} else {
		s.stdin.Close()
	}
	s.stdin = nil
}

// pollable turns a received (blocking) descriptor into a non-blocking file, so that Close ends
// a Read or Write pending on it. f is consumed.
func pollable(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

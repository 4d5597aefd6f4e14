package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// StartContainer starts the container's supervisor, which starts the workload and reports
// back; it returns once the workload runs, or with the reason it could not be started (then
// the container is Exited with Reason StartError).
func (r *Runtime) StartContainer(ctx context.Context, containerID string) error {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return err
	}
	dir := r.containerDir(containerID)
	r.mu.Lock()
	if r.starting[containerID] || r.watches[containerID] != nil {
		r.mu.Unlock()
		return fmt.Errorf("container %s is already started", containerID)
	}
	r.starting[containerID] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.starting, containerID)
		r.mu.Unlock()
	}()
	if st, err := r.readState(containerID); err != nil {
		return err
	} else if st != nil {
		return fmt.Errorf("container %s was started before: a container starts once", containerID)
	}

	cmd, conn, err := r.launchSupervisor(rec, dir)
	if err != nil {
		if rerr := r.recordStartError(ctx, containerID, fmt.Errorf("start the supervisor: %w", err)); rerr != nil {
			return fmt.Errorf("container %s: start the supervisor: %w; %w", containerID, err, rerr)
		}
		return fmt.Errorf("container %s: start the supervisor: %w", containerID, err)
	}
	reader := bufio.NewReader(conn)
	stopAfter := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Unix(1, 0)) })
	report, err := protocol.ReadStartReport(reader)
	stopAfter()
	if err == nil && report.Error != "" {
		conn.Close()
		_ = cmd.Wait()
		// The supervisor records the start error; when it could not, the runtime does, or the
		// container would read as never started.
		if st, serr := r.readState(containerID); serr == nil && st == nil {
			if rerr := r.recordStartError(ctx, containerID, errors.New(report.Error)); rerr != nil {
				return fmt.Errorf("container %s: %s: %w; %w", containerID, report.Error, ErrStartFailed, rerr)
			}
		}
		return fmt.Errorf("container %s: %s: %w", containerID, report.Error, ErrStartFailed)
	}
	if err != nil {
		// The supervisor died before reporting, or ctx ended: it must not go on unwatched.
		conn.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		r.concludeLost(ctx, containerID, fmt.Sprintf("the supervisor did not report the start: %v", err))
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("container %s: the supervisor did not report the start: %w", containerID, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	w := &watch{id: containerID, sandboxID: rec.SandboxID, labels: rec.Config.Labels, conn: conn, reader: reader, cmd: cmd, done: make(chan struct{})}
	logger(ctx).V(4).Info("Container started", "container", containerID, "name", rec.Config.Name, "pid", report.Pid)
	r.emit(lifecycle.ContainerEvent{ContainerID: containerID, SandboxID: rec.SandboxID, Type: lifecycle.ContainerStartedEvent, Labels: rec.Config.Labels})
	r.track(w)
	return nil
}

// ErrStartFailed is wrapped by StartContainer's error when the command could not be started
// (the container is then Exited with Reason StartError and the error's text as Message).
var ErrStartFailed = errors.New("start failed")

// launchSupervisor starts the container's supervisor (Config.SupervisorPath, else the agent
// binary again): in its own session (it outlives the agent), with stdio on /dev/null, a
// socketpair on protocol.ReportFd, and — for the mounts — in a mount namespace of its own (a
// user namespace too when the agent is not root, mapping only the agent's ids).
func (r *Runtime) launchSupervisor(rec *containerRecord, dir string) (*exec.Cmd, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "report"), os.NewFile(uintptr(fds[1]), "report")
	defer theirs.Close()
	defer ours.Close() // FileConn dups it

	attr := &syscall.SysProcAttr{Setsid: true}
	switch {
	case r.root:
		attr.Cloneflags = syscall.CLONE_NEWNS
	case len(rec.Config.Mounts) > 0:
		// The supervisor keeps its own ids in the namespace, so execve would drop the
		// capabilities the namespace gives it; an ambient CAP_SYS_ADMIN survives to mount with
		// (its launcher keeps it from the workload).
		attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	cmd := &exec.Cmd{
		Path:        r.supervisor,
		Args:        []string{protocol.Arg0, rec.ID},
		Env:         supervisorEnv(abs),
		Dir:         "/",
		ExtraFiles:  []*os.File{theirs}, // fd 3 (protocol.ReportFd)
		SysProcAttr: attr,
	}
	// The supervisor's own stderr: where a crash of it leaves its reason.
	stderr, err := os.OpenFile(filepath.Join(dir, records.SupervisorLogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	fc, err := net.FileConn(ours)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, err
	}
	return cmd, fc.(*net.UnixConn), nil
}

// recordStartError records a container that could not be started, when the supervisor could
// not record it itself; an error says it could not be written (recordEnd keeps it meanwhile).
func (r *Runtime) recordStartError(ctx context.Context, id string, cause error) error {
	now := r.clock.Now()
	return r.recordEnd(ctx, id, &records.State{
		State: records.StateExited, StartedAt: now, FinishedAt: now,
		ExitCode: records.StartErrorExitCode, Reason: ReasonStartError, Message: cause.Error(),
	})
}

// supervisorEnv is the supervisor's whole environment: the marker, and GORACE when set (a
// race-enabled binary otherwise sleeps a second at every exit).
func supervisorEnv(dir string) []string {
	env := []string{protocol.EnvName + "=" + dir}
	if v, ok := os.LookupEnv("GORACE"); ok {
		env = append(env, "GORACE="+v)
	}
	return env
}

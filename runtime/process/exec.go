package process

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"

	utilexec "k8s.io/utils/exec"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
	"github.com/vk-static/vk-static/runtime/process/internal/pty"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// Exec runs cmd through the container's supervisor — in its mount namespace, with its
// environment, working directory and user, in a session of its own — with aio's streams, and
// returns when it ends: nil for exit code 0, a utilexec.CodeExitError for another. A command
// that cannot be started (not found) is a plain error. When ctx ends the command is killed.
func (r *Runtime) Exec(ctx context.Context, containerID string, cmd []string, aio provider.AttachIO) error {
	if len(cmd) == 0 {
		return provider.InvalidInput("exec: no command")
	}
	conn, err := r.connectRunning(containerID)
	if err != nil {
		return err
	}
	defer conn.Close()
	streams, err := newExecStreams(aio)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	err = protocol.SendRequest(conn, protocol.Request{Op: protocol.OpExec, Argv: cmd, Fds: streams.names}, streams.remote)
	streams.closeRemote()
	if err != nil {
		streams.close()
		return fmt.Errorf("exec in container %s: %w", containerID, err)
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if streams.master != nil {
		resizeLoop(callCtx, aio, func(size provider.TermSize) { _ = pty.SetWinsize(streams.master, size.Width, size.Height) })
	}
	streams.start(aio)

	// Closing the connection when ctx ends makes the supervisor kill the command.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var rep protocol.Reply
	line, readErr := bufio.NewReader(conn).ReadBytes('\n')
	if readErr == nil {
		readErr = json.Unmarshal(line, &rep)
	}
	streams.finish(ctx, r.clock, readErr == nil)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case readErr != nil:
		return fmt.Errorf("exec in container %s: the supervisor did not answer: %w", containerID, readErr)
	case rep.Error != "":
		return fmt.Errorf("exec in container %s: %s", containerID, rep.Error)
	case rep.ExitCode != 0:
		return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", rep.ExitCode), Code: rep.ExitCode}
	}
	return nil
}

// connectRunning connects to the supervisor of a running container.
func (r *Runtime) connectRunning(containerID string) (*net.UnixConn, error) {
	if _, err := r.loadContainer(containerID); err != nil {
		return nil, err
	}
	st, err := r.readState(containerID)
	if err != nil {
		return nil, err
	}
	if st == nil || st.State != records.StateRunning {
		return nil, fmt.Errorf("container %s: %w", containerID, ErrNotRunning)
	}
	conn, err := protocol.Dial(r.containerDir(containerID))
	if err != nil {
		return nil, fmt.Errorf("container %s: %w (%v)", containerID, ErrNotRunning, err)
	}
	return conn, nil
}

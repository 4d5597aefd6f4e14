package process

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
)

// Attach connects aio to the workload's stdio through its supervisor: its output (all of it on
// Stdout when the container has a TTY) as it comes from now on, and aio's Stdin to its stdin
// when the container keeps one open (ContainerConfig.Stdin; otherwise the client's input is
// ignored). It returns when the workload ends, the client's stdin ends, or ctx ends.
func (r *Runtime) Attach(ctx context.Context, containerID string, aio provider.AttachIO) error {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return err
	}
	conn, err := r.connectRunning(containerID)
	if err != nil {
		return err
	}
	defer conn.Close()
	tty := rec.Config.TTY
	streams := &clientStreams{}
	if err := streams.pipes(rec.Config.Stdin && aio.Stdin() != nil, aio.Stdout() != nil, !tty && aio.Stderr() != nil); err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	err = protocol.SendRequest(conn, protocol.Request{Op: protocol.OpAttach, Fds: streams.names}, streams.remote)
	streams.closeRemote()
	if err != nil {
		streams.close()
		return fmt.Errorf("attach to container %s: %w", containerID, err)
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if tty {
		enc := json.NewEncoder(conn)
		resizeLoop(callCtx, aio, func(size provider.TermSize) { _ = enc.Encode(protocol.Resize{Width: size.Width, Height: size.Height}) })
	}
	streams.start(aio)

	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	_, _ = io.Copy(io.Discard, conn) // the supervisor ends the attach by closing
	cancel()                         // no more resizes on a closed connection
	streams.finish(ctx, r.clock, true)
	return ctx.Err()
}

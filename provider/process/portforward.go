package process

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// PortForward connects stream to 127.0.0.1:port: a process pod listens on the host's network,
// and loopback reaches a listener on any address of it (except one bound to a single other
// address; such a pod is not reachable this way).
func (r *Runtime) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	if _, err := r.loadSandbox(sandboxID); err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("port-forward to port %d: %w", port, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(stream, conn)
		// The port's side ended: end the client's too. The other copy's pending Read of
		// stream ends when the caller closes it.
		stream.Close()
	}()
	_, _ = io.Copy(conn, stream)
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.CloseWrite() // the client finished sending; the answer may still come
	}
	wg.Wait()
	return ctx.Err()
}

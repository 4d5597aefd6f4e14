package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
)

// PortForward connects stream to 127.0.0.1:port: a process pod listens on the host's network,
// and loopback reaches a listener on the wildcard address or on loopback. Only when loopback
// refuses the connection are Config.NodeIPs tried, for a pod that bound its listener to one
// node address.
func (r *Runtime) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	if _, err := r.loadSandbox(sandboxID); err != nil {
		return err
	}
	conn, err := r.dialPort(ctx, port)
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

func (r *Runtime) dialPort(ctx context.Context, port int32) (net.Conn, error) {
	var d net.Dialer
	p := strconv.Itoa(int(port))
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", p))
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		return conn, err
	}
	for _, ip := range r.cfg.NodeIPs {
		if c, nerr := d.DialContext(ctx, "tcp", net.JoinHostPort(ip, p)); nerr == nil {
			return c, nil
		}
	}
	return nil, err
}

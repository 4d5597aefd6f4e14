package api

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
)

// untilHangup returns w and r for a handler that takes the connection over (exec, attach,
// port-forward): r's context also ends when the client hangs up — a read from or a write to the
// connection fails, or the connection is closed — and stop ends it once the handler has returned.
//
// net/http stops watching a connection once it is hijacked, so a request's context otherwise
// lives on after its client has gone: a provider's attach without stdin (kubectl attach
// without -i), which waits for its context or the container's end, kept running — with the
// handler, for as long as the container did — after every kubectl attach that was interrupted.
func untilHangup(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	return &hangupWriter{ResponseWriter: w, hangup: cancel}, r.WithContext(ctx), cancel
}

// hangupWriter is a ResponseWriter whose hijacked connection calls hangup when its client
// hangs up. It has no Unwrap on purpose: cri-streaming unwraps a writer to hijack the original
// for a WebSocket, which would bypass this one.
type hangupWriter struct {
	http.ResponseWriter
	hangup context.CancelFunc
}

func (w *hangupWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return conn, rw, err
	}
	hc := &hangupConn{Conn: conn, hangup: w.hangup}
	// Whatever the client sent after its request, already read into rw's buffer, is read first;
	// everything after it through hc, which sees the end.
	var in io.Reader = hc
	if n := rw.Reader.Buffered(); n > 0 {
		early, _ := rw.Reader.Peek(n)
		in = io.MultiReader(bytes.NewReader(bytes.Clone(early)), hc)
	}
	return hc, bufio.NewReadWriter(bufio.NewReader(in), rw.Writer), nil
}

// hangupConn calls hangup when a read or a write fails or the connection is closed, before the
// call returns (serveSPDYPortForward relies on that order).
type hangupConn struct {
	net.Conn
	hangup context.CancelFunc
}

func (c *hangupConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.hangup()
	}
	return n, err
}

func (c *hangupConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.hangup()
	}
	return n, err
}

func (c *hangupConn) Close() error {
	c.hangup()
	return c.Conn.Close()
}

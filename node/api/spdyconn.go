package api

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/klog/v2"
)

// spdyConn is an upgraded SPDY connection (exec, attach, port-forward) whose goroutines are
// bound to the request: they end when its context ends, the connection closes or the client
// hangs up, and close returns once they have.
//
// It hands over, on arrived, only the streams it knows were replied to. spdystream blocks every
// Write and Close on a stream whose reply could not be written (the connection closed between
// the stream's arrival and its reply) forever, waiting for a reply that will not come. A reply
// fails in two ways: the connection's write fails, or spdystream has stopped serving it (a read
// failed, or the client sent GOAWAY, as its Close does) and refuses to write. hangupConn ends
// the request's context, synchronously, on a failed read or write and on Close; the connection's
// CloseChan is closed before spdystream refuses writes; both therefore show before the reply
// returns, and a live context and an open CloseChan after it mean the reply was written. Any
// other stream is reset, which never waits for a reply.
type spdyConn struct {
	ctx    context.Context
	cancel context.CancelFunc
	conn   httpstream.Connection // set before upgraded is closed

	upgraded chan struct{}
	arrived  chan httpstream.Stream

	mu      sync.Mutex
	closing bool // no goroutine is started once set
	wg      sync.WaitGroup
}

// upgradeSPDY upgrades r's connection (after httpstream.Handshake) with r's context, which must
// come from untilHangup. accept refuses a stream before its reply (nil accepts all). It returns
// nil when the upgrade failed (the upgrader has answered then).
func upgradeSPDY(w http.ResponseWriter, r *http.Request, accept func(httpstream.Stream) error) *spdyConn {
	ctx, cancel := context.WithCancel(r.Context())
	c := &spdyConn{ctx: ctx, cancel: cancel, upgraded: make(chan struct{}), arrived: make(chan httpstream.Stream)}
	// Streams can arrive before UpgradeResponse returns the connection: they wait for upgraded.
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, replySent <-chan struct{}) error {
		if accept != nil {
			if err := accept(s); err != nil {
				return err
			}
		}
		if !c.goroutine(func() { c.deliver(s, replySent) }) {
			return errors.New("the connection is closing")
		}
		return nil
	})
	c.conn = conn
	close(c.upgraded)
	if conn == nil {
		c.close()
		return nil
	}
	return c
}

// deliver hands s to arrived once it was replied to, or resets it.
func (c *spdyConn) deliver(s httpstream.Stream, replySent <-chan struct{}) {
	select {
	case <-replySent:
	case <-c.ctx.Done():
		_ = s.Reset()
		return
	}
	<-c.upgraded
	if !c.replied() {
		_ = s.Reset()
		return
	}
	select {
	case c.arrived <- s:
	case <-c.ctx.Done():
		_ = s.Reset()
	}
}

// replied tells, once a stream's reply has been sent, whether it was written: whether the
// connection was still up.
func (c *spdyConn) replied() bool {
	if c.conn == nil || c.ctx.Err() != nil {
		return false
	}
	select {
	case <-c.conn.CloseChan():
		return false
	default:
		return true
	}
}

// goroutine runs f on a goroutine close waits for, unless the connection is closing.
func (c *spdyConn) goroutine(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// close ends the context, closes the connection (resetting its streams) and waits for every
// goroutine started for it.
func (c *spdyConn) close() {
	c.cancel()
	if c.conn != nil {
		if err := c.conn.Close(); err != nil {
			klog.FromContext(c.ctx).V(4).Info("Closing a streaming connection", "err", err)
		}
	}
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.wg.Wait()
}

package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/klog/v2"
)

// serveSPDYPortForward is cri-streaming's SPDY port-forward (the kubelet's: a connection carries
// any number of forwards, each an error stream and a data stream sharing a request ID) with every
// goroutine it starts bound to the request: it returns once they all have, and they end when
// r's context does, the connection closes or the client hangs up.
//
// cri-streaming's own leaves two behind. Its forwards run with context.Background and are never
// waited for; and a stream whose reply could not be written (the connection closed between the
// stream's arrival and its reply) blocks every Write and Close on it forever (spdystream waits
// for a reply that will not come), so the forward that closes it when the provider returns is
// stuck for good. Here a stream is used only once its reply has been sent and the connection was
// still up then. A reply fails in two ways: the connection's write fails, or spdystream has
// stopped serving it (a read failed or the client sent GOAWAY, as its Close does) and refuses to
// write. hangupConn ends r's context, synchronously, on a failed read or write and on Close; the
// connection's CloseChan is closed before spdystream refuses writes; both therefore show before
// the reply returns, and a live context and an open CloseChan after it mean the reply was written.
// Any other stream is reset, which never waits for a reply.
func serveSPDYPortForward(w http.ResponseWriter, r *http.Request, pf portforward.PortForwarder, podName, uid string, idleTimeout, creationTimeout time.Duration) {
	if _, err := httpstream.Handshake(r, w, portforward.SupportedProtocols); err != nil {
		return // Handshake has answered
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	logger := klog.FromContext(ctx)

	h := &spdyForwards{ctx: ctx, pf: pf, pod: podName, uid: uid, creationTimeout: creationTimeout,
		streams: make(chan httpstream.Stream), pairs: map[string]*forwardPair{}, expired: make(chan *forwardPair),
		upgraded: make(chan struct{})}
	// Streams can arrive before UpgradeResponse returns the connection; they wait for upgraded.
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, h.received)
	h.conn = conn
	close(h.upgraded)
	if conn == nil {
		h.wait()
		return // the upgrader has answered
	}
	conn.SetIdleTimeout(idleTimeout)
	h.run(conn.CloseChan())
	cancel()
	if err := conn.Close(); err != nil {
		logger.V(4).Info("Closing the port-forward connection", "pod", podName, "err", err)
	}
	h.wait()
}

// spdyForwards is one port-forward connection's state.
type spdyForwards struct {
	ctx             context.Context
	pf              portforward.PortForwarder
	pod, uid        string
	creationTimeout time.Duration

	upgraded chan struct{}         // closed once conn is set
	conn     httpstream.Connection // nil when the upgrade failed

	streams chan httpstream.Stream // replied streams, to run
	expired chan *forwardPair      // pairs not completed in time, from their timers
	pairs   map[string]*forwardPair

	mu      sync.Mutex
	closing bool // no goroutine is started once set
	wg      sync.WaitGroup
}

// forwardPair is one forward's streams.
type forwardPair struct {
	id              string
	errStream, data httpstream.Stream
	complete        chan struct{}
}

// goroutine runs f on a goroutine wait waits for, unless the connection is being torn down.
func (h *spdyForwards) goroutine(f func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// wait waits for every goroutine started for the connection.
func (h *spdyForwards) wait() {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	h.wg.Wait()
}

// received is the connection's new-stream handler, called before the stream's reply: it refuses
// a stream without a valid port and type and hands the others to run once replied.
func (h *spdyForwards) received(s httpstream.Stream, replySent <-chan struct{}) error {
	port, err := strconv.ParseUint(s.Headers().Get(corev1.PortHeader), 10, 16)
	if err != nil || port < 1 {
		return fmt.Errorf("%q header must be a port, not %q", corev1.PortHeader, s.Headers().Get(corev1.PortHeader))
	}
	if t := s.Headers().Get(corev1.StreamType); t != corev1.StreamTypeError && t != corev1.StreamTypeData {
		return fmt.Errorf("invalid stream type %q", t)
	}
	started := h.goroutine(func() {
		select {
		case <-replySent:
		case <-h.ctx.Done():
			_ = s.Reset()
			return
		}
		<-h.upgraded
		if !h.replied() {
			_ = s.Reset()
			return
		}
		select {
		case h.streams <- s:
		case <-h.ctx.Done():
			_ = s.Reset()
		}
	})
	if !started {
		return errors.New("the connection is closing")
	}
	return nil
}

// replied tells, once a stream's reply has been sent, whether it was written: whether the
// connection was still up.
func (h *spdyForwards) replied() bool {
	if h.conn == nil || h.ctx.Err() != nil {
		return false
	}
	select {
	case <-h.conn.CloseChan():
		return false
	default:
		return true
	}
}

// run pairs the streams until the connection closes or the context ends, starting a forward for
// each complete pair.
func (h *spdyForwards) run(closed <-chan bool) {
	for {
		select {
		case <-closed:
			return
		case <-h.ctx.Done():
			return
		case p := <-h.expired:
			if h.pairs[p.id] != p {
				continue
			}
			delete(h.pairs, p.id)
			msg := fmt.Sprintf("timed out waiting for the streams of port-forward request %s", p.id)
			klog.FromContext(h.ctx).V(3).Info("Port-forward streams incomplete", "pod", h.pod, "request", p.id)
			if p.errStream != nil {
				_, _ = fmt.Fprint(p.errStream, msg)
			}
			resetAll(p.errStream, p.data)
		case s := <-h.streams:
			id := forwardRequestID(s)
			p, ok := h.pairs[id]
			if !ok {
				p = &forwardPair{id: id, complete: make(chan struct{})}
				h.pairs[id] = p
				h.goroutine(func() { h.expire(p) })
			}
			if s.Headers().Get(corev1.StreamType) == corev1.StreamTypeError {
				if p.errStream != nil {
					_ = s.Reset()
					continue
				}
				p.errStream = s
			} else {
				if p.data != nil {
					_ = s.Reset()
					continue
				}
				p.data = s
			}
			if p.errStream != nil && p.data != nil {
				delete(h.pairs, id)
				close(p.complete)
				h.goroutine(func() { h.forward(p) })
			}
		}
	}
}

// expire hands p back to run if it is not complete within the creation timeout.
func (h *spdyForwards) expire(p *forwardPair) {
	t := time.NewTimer(h.creationTimeout)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.complete:
		return
	case <-h.ctx.Done():
		return
	}
	select {
	case h.expired <- p:
	case <-p.complete:
	case <-h.ctx.Done():
	}
}

// forward runs the provider's port-forward for p; its failure is written on the error stream,
// and both streams are then reset, as the kubelet does.
func (h *spdyForwards) forward(p *forwardPair) {
	port, _ := strconv.ParseInt(p.data.Headers().Get(corev1.PortHeader), 10, 32)
	err := h.pf.PortForward(h.ctx, h.pod, h.uid, int32(port), p.data)
	if err == nil {
		_ = p.data.Close()
		_ = p.errStream.Close()
		return
	}
	msg := fmt.Sprintf("error forwarding port %d to pod %s, uid %v: %v", port, h.pod, h.uid, err)
	klog.FromContext(h.ctx).V(3).Info("Port-forward failed", "pod", h.pod, "port", port, "err", err)
	_, _ = fmt.Fprint(p.errStream, msg)
	resetAll(p.data, p.errStream)
}

func resetAll(streams ...httpstream.Stream) {
	for _, s := range streams {
		if s != nil {
			_ = s.Reset()
		}
	}
}

// forwardRequestID is the stream's request ID; for a client too old to send one (before
// Kubernetes 1.6), the kubelet's guess from the stream IDs (an error stream and its data stream
// are consecutive: n and n+2).
func forwardRequestID(s httpstream.Stream) string {
	if id := s.Headers().Get(corev1.PortForwardRequestIDHeader); id != "" {
		return id
	}
	if s.Headers().Get(corev1.StreamType) == corev1.StreamTypeData {
		return strconv.Itoa(int(s.Identifier()) - 2)
	}
	return strconv.Itoa(int(s.Identifier()))
}

package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/klog/v2"
)

// serveSPDYPortForward is cri-streaming's SPDY port-forward (the kubelet's: a connection carries
// any number of forwards, each an error stream and a data stream sharing a request ID) with every
// goroutine it starts bound to the request (spdyConn): it returns once they all have.
// cri-streaming's own forwards run with context.Background and are never waited for, and one
// whose stream's reply failed blocked forever closing it.
func serveSPDYPortForward(w http.ResponseWriter, r *http.Request, pf portforward.PortForwarder, podName, uid string, idleTimeout, creationTimeout time.Duration) {
	if _, err := httpstream.Handshake(r, w, portforward.SupportedProtocols); err != nil {
		return // Handshake has answered
	}
	c := upgradeSPDY(w, r, acceptForwardStream)
	if c == nil {
		return
	}
	defer c.close()
	c.conn.SetIdleTimeout(idleTimeout)
	h := &spdyForwards{spdyConn: c, pf: pf, pod: podName, uid: uid, creationTimeout: creationTimeout,
		pairs: map[string]*forwardPair{}, expired: make(chan *forwardPair)}
	h.run()
}

// acceptForwardStream refuses a stream without a valid port and type.
func acceptForwardStream(s httpstream.Stream) error {
	port, err := strconv.ParseUint(s.Headers().Get(corev1.PortHeader), 10, 16)
	if err != nil || port < 1 {
		return fmt.Errorf("%q header must be a port, not %q", corev1.PortHeader, s.Headers().Get(corev1.PortHeader))
	}
	if t := s.Headers().Get(corev1.StreamType); t != corev1.StreamTypeError && t != corev1.StreamTypeData {
		return fmt.Errorf("invalid stream type %q", t)
	}
	return nil
}

// spdyForwards is one port-forward connection's forwards.
type spdyForwards struct {
	*spdyConn
	pf              portforward.PortForwarder
	pod, uid        string
	creationTimeout time.Duration

	expired chan *forwardPair // pairs not completed in time, from their timers
	pairs   map[string]*forwardPair
}

// forwardPair is one forward's streams.
type forwardPair struct {
	id              string
	errStream, data httpstream.Stream
	complete        chan struct{}
}

// run pairs the streams until the connection closes or the context ends, starting a forward for
// each complete pair.
func (h *spdyForwards) run() {
	for {
		select {
		case <-h.conn.CloseChan():
			return
		case <-h.ctx.Done():
			return
		case p := <-h.expired:
			if h.pairs[p.id] != p {
				continue
			}
			delete(h.pairs, p.id)
			klog.FromContext(h.ctx).V(3).Info("Port-forward streams incomplete", "pod", h.pod, "request", p.id)
			if p.errStream != nil {
				_, _ = fmt.Fprintf(p.errStream, "timed out waiting for the streams of port-forward request %s", p.id)
			}
			resetAll(p.errStream, p.data)
		case s := <-h.arrived:
			id := forwardRequestID(s)
			p, ok := h.pairs[id]
			if !ok {
				p = &forwardPair{id: id, complete: make(chan struct{})}
				h.pairs[id] = p
				h.goroutine(func() { h.expire(p) })
			}
			slot := &p.data
			if s.Headers().Get(corev1.StreamType) == corev1.StreamTypeError {
				slot = &p.errStream
			}
			if *slot != nil { // a second stream of that type for the request
				_ = s.Reset()
				continue
			}
			*slot = s
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
	klog.FromContext(h.ctx).V(3).Info("Port-forward failed", "pod", h.pod, "port", port, "err", err)
	_, _ = fmt.Fprintf(p.errStream, "error forwarding port %d to pod %s, uid %v: %v", port, h.pod, h.uid, err)
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

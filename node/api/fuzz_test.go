package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider/mock"
)

// handlerDeadline is how long a handler may still run once its client has gone away (the
// request's context ended, or its hijacked connection reads nothing more).
const handlerDeadline = 5 * time.Second

// FuzzHandlers sends requests built from fuzzed methods, paths (their segments as the request
// line carries them, escapes included), query strings and headers through the real handler
// chain — the guard (anonymous, AlwaysAllow), the mux, the routes — over the mock provider,
// or over a provider with none of the optional capabilities. Whatever the request:
//
//   - no handler panics, and each returns promptly once its client has gone away;
//   - the status is below 500, except 501 naming the capability a bare provider lacks; 101 only
//     for a request asking for an upgrade;
//   - the answer is well-formed: a redirect says where, a refusal says why in plain text, JSON
//     is JSON, /metrics/resource parses as the Prometheus text format;
//   - nothing the request started is left running (goleak).
//
// The seeds are badRequests, and requests that should succeed.
func FuzzHandlers(f *testing.F) {
	for _, tc := range badRequests {
		path, query, _ := strings.Cut(tc.target, "?")
		var h strings.Builder
		_ = tc.header.Write(&h)
		f.Add(tc.method, path, query, h.String(), false)
	}
	wsKey := "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	for _, seed := range []struct {
		method, path, query, header string
		bare                        bool
	}{
		{"GET", "/pods", "", "", false},
		{"GET", "/runningpods/", "", "", false},
		{"GET", "/stats/summary", "only_cpu_and_memory=true", "", false},
		{"GET", "/metrics/resource", "", "", false},
		{"GET", "/metrics/resource", "", "", true},
		{"GET", "/containerLogs/ns/web/main", "tailLines=1&timestamps=true&limitBytes=10", "", false},
		{"GET", "/containerLogs/ns/web/main", "follow=true&tailLines=0", "", false},
		{"GET", "/containerLogs/ns/web/main", "sinceSeconds=60&previous=false", "", true},
		{"GET", "/exec/ns/web/main", "command=echo&command=hi&output=1", wsKey + "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n", false},
		{"GET", "/exec/ns/web/api-uid/main", "command=cat&input=1&output=1&tty=1", wsKey + "Sec-WebSocket-Protocol: channel.k8s.io\r\n", false},
		{"GET", "/attach/ns/web/main", "input=1&output=1&error=1", wsKey + "Sec-WebSocket-Protocol: v4.base64.channel.k8s.io\r\n", false},
		{"GET", "/attach/ns/web/main", "output=1", wsKey + "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n", false},
		{"GET", "/portForward/ns/web", "ports=8080", wsKey + "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n", false},
		{"POST", "/exec/ns/web/main", "command=env&output=1&error=1", "X-Stream-Protocol-Version: v4.channel.k8s.io\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n", false},
		{"POST", "/portForward/ns/web/api-uid", "", "X-Stream-Protocol-Version: portforward.k8s.io\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n", false},
	} {
		f.Add(seed.method, seed.path, seed.query, seed.header, seed.bare)
	}

	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	p, err := mock.New(mock.Config{NodeName: "node-a", InternalIP: "10.1.2.3", Clock: clocktesting.NewFakeClock(routeEpoch)})
	if err != nil {
		f.Fatal(err)
	}
	p.NotifyPods(ctx, func(*corev1.Pod) {})
	pods := podmanager.NewBasicPodManager()
	pod := badRequestPod()
	pods.AddPod(pod)
	if err := p.CreatePod(ctx, pod.DeepCopy()); err != nil {
		f.Fatal(err)
	}
	full := guarded(f, Routes{Pods: pods, Provider: p})
	bare := guarded(f, Routes{Pods: pods, Provider: bareProvider{p}})
	// What runs now runs for every input, and the fuzzing engine starts a signal watcher of its
	// own in each worker.
	leakOpts := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("os/signal.NotifyContext.func1")}

	f.Fuzz(func(t *testing.T, method, path, query, header string, noCapabilities bool) {
		req := fuzzedRequest(method, path, query, header)
		if req == nil {
			return // net/http answers it 400 before any handler
		}
		h := full
		if noCapabilities {
			h = bare
		}
		res := serveFuzzed(t, h, req)
		checkAnswer(t, req, res, noCapabilities)
		verifyNoLeaks(t, leakOpts...)
	})
}

// fuzzedRequest is the request net/http's server would read from a request line and headers
// made of these parts, or nil when it would refuse them itself.
func fuzzedRequest(method, path, query, header string) *http.Request {
	if method == "" {
		method = http.MethodGet
	}
	target := path
	if query != "" {
		target += "?" + query
	}
	if header != "" && !strings.HasSuffix(header, "\r\n") {
		header += "\r\n"
	}
	raw := method + " " + target + " HTTP/1.1\r\nHost: node-a\r\n" + header + "\r\n"
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil || !validMethod(req.Method) || req.URL.Path == "" || req.URL.Path[0] != '/' {
		return nil
	}
	req.RemoteAddr = "192.0.2.1:40000"
	return req
}

// validMethod is whether net/http's server takes m as a method (a token).
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, c := range []byte(m) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// fuzzAnswer is what the client saw: the recorded answer, or, when the handler took the
// connection over, what it wrote there.
type fuzzAnswer struct {
	code     int
	header   http.Header
	body     []byte
	hijacked bool
}

// serveFuzzed serves req with h as a client that leaves once the answer has started (its first
// flush) and, on a connection taken over for a WebSocket, sends nothing after the handshake.
// A SPDY upgrade fails to take the connection over, as when the client is gone: one taken over
// would wait for the client's streams for streamCreationTimeout (30 s, cri-streaming's wait,
// which no context ends), far past what an input may take.
func serveFuzzed(t *testing.T, h http.Handler, req *http.Request) fuzzAnswer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &fuzzWriter{ResponseRecorder: httptest.NewRecorder(), req: req, leave: cancel}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		h.ServeHTTP(w, req.WithContext(ctx))
	}()
	timer := time.NewTimer(handlerDeadline)
	defer timer.Stop()
	select {
	case p := <-done:
		if p != nil && p != http.ErrAbortHandler {
			t.Fatalf("%s %s: panic: %v", req.Method, req.RequestURI, p)
		}
	case <-timer.C:
		t.Fatalf("%s %s: the handler still runs %s after its client went away", req.Method, req.RequestURI, handlerDeadline)
	}
	if w.conn != nil {
		return w.conn.answer(t, req)
	}
	return fuzzAnswer{code: w.Code, header: w.Result().Header, body: w.Body.Bytes()}
}

// fuzzWriter records the answer; it can be hijacked (for a WebSocket) and ends the client's
// request at its first flush.
type fuzzWriter struct {
	*httptest.ResponseRecorder
	req   *http.Request
	leave context.CancelFunc
	conn  *fuzzConn
}

func (w *fuzzWriter) Flush() {
	w.ResponseRecorder.Flush()
	w.leave()
}

func (w *fuzzWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if !strings.EqualFold(w.req.Header.Get("Upgrade"), "websocket") {
		return nil, nil, errors.New("fuzz: the client has gone away")
	}
	w.conn = &fuzzConn{}
	return w.conn, bufio.NewReadWriter(bufio.NewReader(w.conn), bufio.NewWriter(w.conn)), nil
}

// fuzzConn is a hijacked connection whose client sends nothing more and reads what is written.
type fuzzConn struct {
	mu      sync.Mutex
	written bytes.Buffer
	closed  bool
}

func (c *fuzzConn) Read([]byte) (int, error) {
	return 0, errors.New("fuzz: the client closed the connection")
}

func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.written.Write(p)
}

func (c *fuzzConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *fuzzConn) LocalAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 10250} }
func (c *fuzzConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 40000}
}
func (c *fuzzConn) SetDeadline(time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }

// answer is the HTTP answer written on the connection.
func (c *fuzzConn) answer(t *testing.T, req *http.Request) fuzzAnswer {
	t.Helper()
	c.mu.Lock()
	raw := append([]byte(nil), c.written.Bytes()...)
	c.mu.Unlock()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), req)
	if err != nil {
		t.Fatalf("%s %s: the hijacked connection carries no HTTP answer (%v): %q", req.Method, req.RequestURI, err, raw)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if resp.StatusCode != http.StatusSwitchingProtocols {
		_, _ = body.ReadFrom(resp.Body)
	}
	return fuzzAnswer{code: resp.StatusCode, header: resp.Header, body: body.Bytes(), hijacked: true}
}

// checkAnswer fails t when res is not an answer the kubelet API may give to req.
func checkAnswer(t *testing.T, req *http.Request, res fuzzAnswer, noCapabilities bool) {
	t.Helper()
	what := req.Method + " " + req.RequestURI
	body := string(res.body)
	switch {
	case res.code == http.StatusSwitchingProtocols:
		if req.Header.Get("Upgrade") == "" {
			t.Fatalf("%s: 101 to a request that asked for no upgrade", what)
		}
	case res.code < 200 || res.code > 599:
		t.Fatalf("%s: status %d", what, res.code)
	case res.code == http.StatusNotImplemented:
		if !noCapabilities || !strings.Contains(body, "Handler") {
			t.Fatalf("%s: 501 not for a missing capability: %q", what, body)
		}
	case res.code >= 500:
		t.Fatalf("%s: %d: %q", what, res.code, body)
	case res.code >= 300 && res.code < 400:
		if res.header.Get("Location") == "" {
			t.Fatalf("%s: %d without a Location", what, res.code)
		}
	case res.code >= 400:
		// The WebSocket library answers a bad handshake on the connection it took over, with
		// a message but no Content-Type, and a subprotocol it does not speak with a bare 403.
		if res.hijacked && (res.code == http.StatusForbidden || strings.TrimSpace(body) != "") {
			return
		}
		if strings.TrimSpace(body) == "" || !strings.HasPrefix(res.header.Get("Content-Type"), "text/plain") {
			t.Fatalf("%s: %d without a plain-text message (%q): %q", what, res.code, res.header.Get("Content-Type"), body)
		}
	default: // 2xx
		ct := res.header.Get("Content-Type")
		switch {
		case len(res.body) > 0 && ct == "":
			t.Fatalf("%s: %d with a body but no Content-Type", what, res.code)
		case strings.HasPrefix(ct, "application/json"):
			if !json.Valid(res.body) {
				t.Fatalf("%s: invalid JSON: %q", what, body)
			}
		case strings.HasPrefix(ct, "text/plain; version=0.0.4"):
			parser := expfmt.NewTextParser(model.UTF8Validation)
			if _, err := parser.TextToMetricFamilies(bytes.NewReader(res.body)); err != nil {
				t.Fatalf("%s: the metrics do not parse: %v\n%s", what, err, body)
			}
		}
	}
}

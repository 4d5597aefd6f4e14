package api

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// guarded is the handler a Server serves — the routes on an http.ServeMux behind the guard —
// with anonymous requests allowed everything (--anonymous-auth, AlwaysAllow: the same
// authenticator and authorizer the Server builds), so that what is tested is the routes'
// answers as a client of the real server sees them.
func guarded(t testing.TB, rt Routes) http.Handler {
	t.Helper()
	authn, err := newAuthenticator(Config{Anonymous: true}, nil)
	require.NoError(t, err)
	mux := http.NewServeMux()
	rt.Register(mux)
	return &guard{nodeName: "node-a", authn: authn, authz: alwaysAllow{}, next: mux, logger: klog.Background()}
}

// A badRequest is one request a client may send wrongly, and the status it must get.
type badRequest struct {
	name   string
	method string // GET when empty
	target string // path and query, as on the request line
	header http.Header
	want   int
	noBody bool // the refusal has no message: the WebSocket handshake's, written raw
}

// Headers of the two upgrade protocols, whole and in parts.
var (
	spdyProtocol = http.Header{"X-Stream-Protocol-Version": {"v4.channel.k8s.io"}}
	spdyUpgrade  = http.Header{"X-Stream-Protocol-Version": {"v4.channel.k8s.io"}, "Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}}
	wsNoKey      = http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"}}
	wsOldVersion = http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"8"},
		"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	wsBadProtocol = http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}, "Sec-Websocket-Protocol": {"nonsense.k8s.io"}}
)

// badRequests are the wrong requests every route must refuse with a clean 4xx (or, for a path
// the mux cleans, a redirect). The pod they name exists: ns/web (UID api-uid) with container
// main, declaring port 8080 (badRequestPod). They seed FuzzHandlers too.
var badRequests = []badRequest{
	// containerLogs: the kubelet's query parameters.
	{name: "tailLines negative", target: "/containerLogs/ns/web/main?tailLines=-1", want: 400},
	{name: "tailLines not a number", target: "/containerLogs/ns/web/main?tailLines=ten", want: 400},
	{name: "tailLines beyond int64", target: "/containerLogs/ns/web/main?tailLines=99999999999999999999", want: 400},
	{name: "tailLines a float", target: "/containerLogs/ns/web/main?tailLines=1.5", want: 400},
	{name: "tail negative", target: "/containerLogs/ns/web/main?tail=-3", want: 400},
	{name: "limitBytes zero", target: "/containerLogs/ns/web/main?limitBytes=0", want: 400},
	{name: "limitBytes negative", target: "/containerLogs/ns/web/main?limitBytes=-1", want: 400},
	{name: "limitBytes not a number", target: "/containerLogs/ns/web/main?limitBytes=lots", want: 400},
	{name: "limitBytes beyond int64", target: "/containerLogs/ns/web/main?limitBytes=18446744073709551616", want: 400},
	{name: "limitBytes exponent", target: "/containerLogs/ns/web/main?limitBytes=1e9", want: 400},
	{name: "sinceSeconds zero", target: "/containerLogs/ns/web/main?sinceSeconds=0", want: 400},
	{name: "sinceSeconds negative", target: "/containerLogs/ns/web/main?sinceSeconds=-60", want: 400},
	{name: "sinceSeconds not a number", target: "/containerLogs/ns/web/main?sinceSeconds=1h", want: 400},
	{name: "sinceTime not a time", target: "/containerLogs/ns/web/main?sinceTime=yesterday", want: 400},
	{name: "sinceTime a date only", target: "/containerLogs/ns/web/main?sinceTime=2026-01-02", want: 400},
	{name: "sinceTime month 13", target: "/containerLogs/ns/web/main?sinceTime=2026-13-01T00:00:00Z", want: 400},
	{name: "sinceTime without zone", target: "/containerLogs/ns/web/main?sinceTime=2026-01-02T03:04:05", want: 400},
	{name: "sinceSeconds and sinceTime", target: "/containerLogs/ns/web/main?sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z", want: 400},
	{name: "follow not a boolean", target: "/containerLogs/ns/web/main?follow=sometimes", want: 400},
	{name: "previous not a boolean", target: "/containerLogs/ns/web/main?previous=2", want: 400},
	{name: "timestamps not a boolean", target: "/containerLogs/ns/web/main?timestamps=%00", want: 400},
	{name: "previous of a container that never restarted", target: "/containerLogs/ns/web/main?previous=true", want: 400},
	{name: "logs of an unknown namespace", target: "/containerLogs/other/web/main", want: 404},
	{name: "logs of an unknown pod", target: "/containerLogs/ns/nope/main", want: 404},
	{name: "logs of an unknown container", target: "/containerLogs/ns/web/nope", want: 404},
	{name: "logs with a pod UID", target: "/containerLogs/ns/web/api-uid/main", want: 404}, // no such route
	{name: "logs traversal in the pod", target: "/containerLogs/ns/..%2F..%2Fetc/main", want: 400},
	{name: "logs traversal in the container", target: "/containerLogs/ns/web/..%2F..%2Fpasswd", want: 400},
	{name: "logs traversal in the namespace", target: "/containerLogs/..%2Fns/web/main", want: 400},
	{name: "logs encoded dot-dot pod", target: "/containerLogs/ns/%2e%2e/main", want: 400}, // the mux cleans only what is not escaped
	{name: "logs dot-dot pod", target: "/containerLogs/ns/../main", want: 307},             // the mux cleans it away
	{name: "logs dot pod", target: "/containerLogs/ns/./main", want: 307},
	{name: "logs encoded dot-dot container", target: "/containerLogs/ns/web/%2e%2e", want: 400},
	{name: "logs double-encoded dot-dot", target: "/containerLogs/ns/web/%252e%252e", want: 400},
	{name: "logs slash in the pod", target: "/containerLogs/ns/web%2Fx/main", want: 400},
	{name: "logs backslash in the pod", target: "/containerLogs/ns/web%5C..%5Cx/main", want: 400},
	{name: "logs NUL in the container", target: "/containerLogs/ns/web/main%00", want: 400},
	{name: "logs NUL in the namespace", target: "/containerLogs/n%00s/web/main", want: 400},
	{name: "logs upper case pod", target: "/containerLogs/ns/Web/main", want: 400},
	{name: "logs too long a pod name", target: "/containerLogs/ns/" + strings.Repeat("a", 254) + "/main", want: 400},
	{name: "logs too long a container name", target: "/containerLogs/ns/web/" + strings.Repeat("c", 64), want: 400},
	{name: "logs empty pod", target: "/containerLogs/ns//main", want: 307},
	{name: "logs too few segments", target: "/containerLogs/ns/web", want: 404},
	{name: "logs too many segments", target: "/containerLogs/ns/web/main/extra", want: 404},
	{name: "logs POST", method: "POST", target: "/containerLogs/ns/web/main", want: 405},
	{name: "logs DELETE", method: "DELETE", target: "/containerLogs/ns/web/main", want: 405},

	// exec: names, the UID form, cri-streaming's options, the upgrade handshake.
	{name: "exec without command", method: "POST", target: "/exec/ns/web/main?output=1", header: spdyUpgrade, want: 400},
	{name: "exec with no stream", method: "POST", target: "/exec/ns/web/main?command=env", header: spdyUpgrade, want: 400},
	{name: "exec with streams off", method: "POST", target: "/exec/ns/web/main?command=env&input=0&output=0&error=0", header: spdyUpgrade, want: 400},
	{name: "exec without upgrade headers", method: "POST", target: "/exec/ns/web/main?command=env&output=1", want: 400},
	{name: "exec with a protocol but no upgrade", method: "POST", target: "/exec/ns/web/main?command=env&output=1", header: spdyProtocol, want: 400},
	{name: "exec with an unknown protocol", method: "POST", target: "/exec/ns/web/main?command=env&output=1",
		header: http.Header{"X-Stream-Protocol-Version": {"v9.channel.k8s.io"}, "Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}}, want: 403},
	{name: "exec with an empty protocol", method: "POST", target: "/exec/ns/web/main?command=env&output=1",
		header: http.Header{"X-Stream-Protocol-Version": {" , "}, "Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}}, want: 400},
	{name: "exec upgrading to something else", method: "POST", target: "/exec/ns/web/main?command=env&output=1",
		header: http.Header{"X-Stream-Protocol-Version": {"v4.channel.k8s.io"}, "Connection": {"Upgrade"}, "Upgrade": {"h2c"}}, want: 400},
	{name: "exec websocket without a key", target: "/exec/ns/web/main?command=env&output=1", header: wsNoKey, want: 400},
	{name: "exec websocket of an old version", target: "/exec/ns/web/main?command=env&output=1", header: wsOldVersion, want: 400},
	// The WebSocket library refuses a subprotocol after taking the connection over, with no body.
	{name: "exec websocket unknown subprotocol", target: "/exec/ns/web/main?command=env&output=1", header: wsBadProtocol, want: 403, noBody: true},
	{name: "exec unknown pod", method: "POST", target: "/exec/ns/nope/main?command=env&output=1", header: spdyUpgrade, want: 404},
	{name: "exec unknown container", method: "POST", target: "/exec/ns/web/nope?command=env&output=1", header: spdyUpgrade, want: 404},
	{name: "exec unknown namespace", method: "POST", target: "/exec/other/web/main?command=env&output=1", header: spdyUpgrade, want: 404},
	{name: "exec wrong UID", method: "POST", target: "/exec/ns/web/other-uid/main?command=env&output=1", header: spdyUpgrade, want: 404},
	{name: "exec UID form, unknown container", method: "POST", target: "/exec/ns/web/api-uid/nope?command=env&output=1", header: spdyUpgrade, want: 404},
	{name: "exec traversal", method: "POST", target: "/exec/ns/web%2F..%2Fx/main?command=env&output=1", header: spdyUpgrade, want: 400},
	{name: "exec NUL in the container", method: "POST", target: "/exec/ns/web/ma%00in?command=env&output=1", header: spdyUpgrade, want: 400},
	{name: "exec dot-dot as the UID", method: "POST", target: "/exec/ns/web/%2e%2e/main?command=env&output=1", header: spdyUpgrade, want: 404},
	{name: "exec PUT", method: "PUT", target: "/exec/ns/web/main?command=env&output=1", want: 405},
	{name: "exec PATCH", method: "PATCH", target: "/exec/ns/web/main?command=env&output=1", want: 405},

	// attach: the same, without a command.
	{name: "attach with no stream", method: "POST", target: "/attach/ns/web/main", header: spdyUpgrade, want: 400},
	{name: "attach tty only", method: "POST", target: "/attach/ns/web/main?tty=1", header: spdyUpgrade, want: 400},
	{name: "attach without upgrade headers", method: "POST", target: "/attach/ns/web/main?output=1", want: 400},
	{name: "attach with an unknown protocol", method: "POST", target: "/attach/ns/web/main?output=1",
		header: http.Header{"X-Stream-Protocol-Version": {"channel.k8s.io.v99"}}, want: 403},
	{name: "attach websocket without a key", target: "/attach/ns/web/main?output=1", header: wsNoKey, want: 400},
	{name: "attach unknown pod", method: "POST", target: "/attach/ns/nope/main?output=1", header: spdyUpgrade, want: 404},
	{name: "attach unknown container", method: "POST", target: "/attach/ns/web/nope?output=1", header: spdyUpgrade, want: 404},
	{name: "attach wrong UID", method: "POST", target: "/attach/ns/web/other-uid/main?output=1", header: spdyUpgrade, want: 404},
	{name: "attach traversal", method: "POST", target: "/attach/ns/..%2F..%2Fx/main?output=1", header: spdyUpgrade, want: 400},
	{name: "attach DELETE", method: "DELETE", target: "/attach/ns/web/main?output=1", want: 405},

	// portForward: names, the UID form, ports, the upgrade handshake.
	{name: "portForward without upgrade headers", method: "POST", target: "/portForward/ns/web", want: 400},
	{name: "portForward with an unknown protocol", method: "POST", target: "/portForward/ns/web",
		header: http.Header{"X-Stream-Protocol-Version": {"portforward.k8s.io.v9"}, "Connection": {"Upgrade"}, "Upgrade": {"SPDY/3.1"}}, want: 403},
	{name: "portForward websocket without ports", target: "/portForward/ns/web", header: wsNoKey, want: 400},
	{name: "portForward websocket empty port", target: "/portForward/ns/web?ports=", header: wsNoKey, want: 400},
	{name: "portForward websocket port not a number", target: "/portForward/ns/web?ports=http", header: wsNoKey, want: 400},
	{name: "portForward websocket port zero", target: "/portForward/ns/web?ports=0", header: wsNoKey, want: 400},
	{name: "portForward websocket port negative", target: "/portForward/ns/web?ports=-80", header: wsNoKey, want: 400},
	{name: "portForward websocket port too big", target: "/portForward/ns/web?ports=65536", header: wsNoKey, want: 400},
	{name: "portForward websocket ports, one bad", target: "/portForward/ns/web?ports=8080,x", header: wsNoKey, want: 400},
	{name: "portForward websocket without a key", target: "/portForward/ns/web?ports=8080", header: wsNoKey, want: 400},
	{name: "portForward unknown pod", method: "POST", target: "/portForward/ns/nope", header: spdyUpgrade, want: 404},
	{name: "portForward unknown namespace", method: "POST", target: "/portForward/other/web", header: spdyUpgrade, want: 404},
	{name: "portForward wrong UID", method: "POST", target: "/portForward/ns/web/other-uid", header: spdyUpgrade, want: 404},
	{name: "portForward traversal", method: "POST", target: "/portForward/ns/..%2Fx", header: spdyUpgrade, want: 400},
	{name: "portForward NUL", method: "POST", target: "/portForward/ns/web%00", header: spdyUpgrade, want: 400},
	{name: "portForward too many segments", method: "POST", target: "/portForward/ns/web/api-uid/x", header: spdyUpgrade, want: 404},
	{name: "portForward PUT", method: "PUT", target: "/portForward/ns/web", want: 405},

	// The read-only routes: other methods, and what is not a route.
	{name: "pods POST", method: "POST", target: "/pods", want: 405},
	{name: "pods DELETE", method: "DELETE", target: "/pods", want: 405},
	{name: "runningpods PUT", method: "PUT", target: "/runningpods/", want: 405},
	{name: "runningpods deeper", target: "/runningpods/ns/web", want: 404},
	{name: "stats/summary POST", method: "POST", target: "/stats/summary", want: 405},
	{name: "stats of a pod", target: "/stats/ns/web", want: 404}, // the kubelet's old per-pod stats are gone
	{name: "metrics/resource POST", method: "POST", target: "/metrics/resource", want: 405},
	{name: "metrics/resource PATCH", method: "PATCH", target: "/metrics/resource", want: 405},
	{name: "traversal to the host", target: "/containerLogs/../../../../etc/passwd", want: 307},
	{name: "nothing here", target: "/logs/", want: 404},
}

// badRequestPod is the pod badRequests name.
func badRequestPod() *corev1.Pod {
	pod := testPod("ns", "web", "api-uid", podutil.APIServerSource, "main")
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	return pod
}

// sendRaw writes one request as target on its request line, so that what the client would
// escape or clean reaches the server as written, and reads the answer.
func sendRaw(t *testing.T, addr, method, target string, header http.Header) (*http.Response, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: node-a\r\n")
	require.NoError(t, header.Write(&b))
	b.WriteString("Content-Length: 0\r\n\r\n")
	_, err = conn.Write([]byte(b.String()))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body strings.Builder
	if resp.StatusCode != http.StatusSwitchingProtocols {
		_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
	}
	return resp, body.String()
}

// Every wrong request gets the 4xx (or the mux's redirect) it deserves, with a message saying
// why, never a 5xx; the server is the real handler chain (guard, mux, routes) over a real
// connection, so upgrades are judged as they would be; nothing is left running (newRouteEnv).
func TestBadRequestsAreRefused(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, badRequestPod())
	srv := httptest.NewServer(guarded(t, Routes{Pods: e.pods, Provider: e.provider}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	for _, tc := range badRequests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			resp, body := sendRaw(t, addr, method, tc.target, tc.header)
			assert.Equal(t, tc.want, resp.StatusCode, "%s %s: %s", method, tc.target, body)
			assert.Less(t, resp.StatusCode, 500)
			switch {
			case resp.StatusCode >= 300 && resp.StatusCode < 400:
				assert.NotEmpty(t, resp.Header.Get("Location"), "a redirect says where")
			case resp.StatusCode >= 400 && !tc.noBody:
				assert.NotEmpty(t, strings.TrimSpace(body), "a refusal says why")
			}
		})
	}
}

// A provider without a capability answers 501 naming it on each route that needs it, even to
// a request that is otherwise right.
func TestMissingCapabilitiesAreNotImplemented(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, badRequestPod())
	srv := httptest.NewServer(guarded(t, Routes{Pods: e.pods, Provider: bareProvider{e.provider}}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()

	for _, tc := range []struct{ method, target, capability string }{
		{"GET", "/containerLogs/ns/web/main", "ContainerLogsHandler"},
		{"POST", "/exec/ns/web/main?command=env&output=1", "ContainerExecHandler"},
		{"POST", "/attach/ns/web/api-uid/main?output=1", "ContainerAttachHandler"},
		{"POST", "/portForward/ns/web", "PortForwardHandler"},
		{"GET", "/stats/summary", "StatsSummaryHandler"},
		{"GET", "/metrics/resource", "StatsSummaryHandler"},
	} {
		resp, body := sendRaw(t, addr, tc.method, tc.target, spdyUpgrade)
		assert.Equal(t, http.StatusNotImplemented, resp.StatusCode, "%s: %s", tc.target, body)
		assert.Contains(t, body, tc.capability, tc.target)
	}
}

// Values at the edge of what the parameters take are not errors: they ask for everything, as
// the kubelet reads them (huge tailLines and limitBytes, a sinceSeconds reaching before any
// log, a sinceTime long past or far ahead).
func TestLogParametersAtTheirLimits(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, badRequestPod())
	whole := "mock: created container main (image img-main)\nmock: started container main\n"
	for query, want := range map[string]string{
		"tailLines=9223372036854775807":                       whole,
		"tail=9223372036854775807":                            whole,
		"limitBytes=9223372036854775807":                      whole,
		"sinceSeconds=1":                                      whole, // the fake clock has not moved
		"sinceSeconds=9223372036854775807":                    whole,
		"sinceSeconds=9223372036":                             whole, // the most a time.Duration holds
		"sinceSeconds=9223372037":                             whole, // one more
		"sinceSeconds=99999999999":                            whole,
		"sinceTime=0001-01-01T00:00:00Z":                      whole,
		"sinceTime=1970-01-01T00:00:00Z":                      whole,
		"sinceTime=9999-12-31T23:59:59Z":                      "",
		"sinceTime=2026-01-02T03:04:05%2B01:00":               whole, // an hour before routeEpoch
		"tailLines=1&limitBytes=9223372036854775807&follow=0": "mock: started container main\n",
	} {
		code, body := e.get(t, "/containerLogs/ns/web/main?"+query)
		assert.Equal(t, http.StatusOK, code, "%s: %s", query, body)
		assert.Equal(t, want, body, query)
	}
}

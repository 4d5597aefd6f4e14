package probe

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// serverTarget splits a test server's URL into a Target host and a port.
func serverTarget(t *testing.T, srv *httptest.Server) (Target, int32) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)
	return Target{Host: u.Hostname()}, int32(port)
}

func httpProbeSpec(path string, port int32) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}}
}

func TestRunHTTPStatusCodes(t *testing.T) {
	tests := []struct {
		status  int
		want    Result
		wantMsg string
	}{
		{http.StatusOK, Success, "body"},
		{http.StatusNoContent, Success, ""},
		{http.StatusMovedPermanently, Success, "Probe terminated redirects, Response body: body"}, // no Location: not followed
		{399, Success, "Probe terminated redirects, Response body: body"},
		{http.StatusBadRequest, Failure, "HTTP probe failed with statuscode: 400"},
		{http.StatusInternalServerError, Failure, "HTTP probe failed with statuscode: 500"},
		{http.StatusSwitchingProtocols, Failure, "HTTP probe failed with statuscode: 101"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				if tt.status != http.StatusNoContent && tt.status != http.StatusSwitchingProtocols {
					_, _ = w.Write([]byte("body"))
				}
			}))
			defer srv.Close()
			target, port := serverTarget(t, srv)
			got, msg, err := Run(t.Context(), httpProbeSpec("/healthz", port), target)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantMsg, msg)
		})
	}
}

func TestRunHTTPRequest(t *testing.T) {
	type seen struct {
		path, query, host, userAgent, accept, custom string
		acceptSet                                    bool
	}
	tests := []struct {
		name    string
		path    string
		headers []corev1.HTTPHeader
		want    seen
	}{
		{
			name: "the kubelet's defaults",
			path: "/healthz?full=1",
			want: seen{path: "/healthz", query: "full=1", userAgent: "kube-probe/1.36", accept: "*/*", acceptSet: true},
		},
		{
			name:    "headers set by the probe",
			path:    "/ready",
			headers: []corev1.HTTPHeader{{Name: "User-Agent", Value: "mine"}, {Name: "Accept", Value: "application/json"}, {Name: "X-Custom", Value: "v"}, {Name: "Host", Value: "app.example"}},
			want:    seen{path: "/ready", host: "app.example", userAgent: "mine", accept: "application/json", acceptSet: true, custom: "v"},
		},
		{
			name:    "an empty Accept removes it",
			headers: []corev1.HTTPHeader{{Name: "Accept", Value: ""}},
			want:    seen{path: "/", userAgent: "kube-probe/1.36"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got seen
			srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				_, acceptSet := r.Header["Accept"]
				got = seen{path: r.URL.Path, query: r.URL.RawQuery, host: r.Host, userAgent: r.UserAgent(), accept: r.Header.Get("Accept"), acceptSet: acceptSet, custom: r.Header.Get("X-Custom")}
			}))
			defer srv.Close()
			target, port := serverTarget(t, srv)
			p := httpProbeSpec(tt.path, port)
			p.HTTPGet.HTTPHeaders = tt.headers
			res, _, err := Run(t.Context(), p, target)
			require.NoError(t, err)
			require.Equal(t, Success, res)
			if tt.want.host == "" {
				tt.want.host = srv.Listener.Addr().String()
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRunHTTPNamedPortAndHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	_, port := serverTarget(t, srv)

	// The probe names the port; the target's host is used.
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("web")}}}
	target := Target{Host: "127.0.0.1", Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: port}}}
	res, _, err := Run(t.Context(), p, target)
	require.NoError(t, err)
	assert.Equal(t, Success, res)

	// The probe's own host wins over the target's.
	p.HTTPGet.Host = "127.0.0.1"
	target.Host = "192.0.2.1" // TEST-NET: would not answer
	res, _, err = Run(t.Context(), p, target)
	require.NoError(t, err)
	assert.Equal(t, Success, res)

	// An undeclared name is an error, not a failure.
	p.HTTPGet.Port = intstr.FromString("metrics")
	res, _, err = Run(t.Context(), p, target)
	require.ErrorContains(t, err, "port metrics not found")
	assert.Equal(t, Unknown, res)

	// No host anywhere.
	p.HTTPGet.Host, p.HTTPGet.Port = "", intstr.FromInt32(port)
	_, _, err = Run(t.Context(), p, Target{})
	require.ErrorIs(t, err, ErrNoHost)
}

func TestRunHTTPRedirects(t *testing.T) {
	var mu sync.Mutex
	var otherHostHit bool
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		otherHostHit = true
		mu.Unlock()
	}))
	defer other.Close()
	_, otherPort := serverTarget(t, other)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/same-to-failure":
			http.Redirect(w, r, "/bad", http.StatusFound)
		case "/other":
			// Same port number space, other host name: "localhost" is not "127.0.0.1".
			http.Redirect(w, r, "http://localhost:"+strconv.Itoa(int(otherPort))+"/", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ok":
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	target, port := serverTarget(t, srv)

	tests := []struct {
		path    string
		want    Result
		wantMsg string
	}{
		{"/same", Success, ""},
		{"/same-to-failure", Failure, "HTTP probe failed with statuscode: 503"},
		{"/other", Success, "Probe terminated redirects, Response body: "},
		{"/loop", Failure, "stopped after 10 redirects"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, msg, err := Run(t.Context(), httpProbeSpec(tt.path, port), target)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Contains(t, msg, tt.wantMsg)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	assert.False(t, otherHostHit, "a redirect to another host is not followed")
}

func TestRunHTTPWarningIsAnOutcome(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	}))
	defer srv.Close()
	target, port := serverTarget(t, srv)
	o, _, err := runOnce(t.Context(), withDefaults(httpProbeSpec("/", port)), target)
	require.NoError(t, err)
	assert.Equal(t, outcomeWarning, o, "the Manager reports it as a ProbeWarning event")
}

func TestRunHTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	target, port := serverTarget(t, srv)
	got, msg, err := Run(t.Context(), httpProbeSpec("/", port), target) // timeoutSeconds unset: 1s
	require.NoError(t, err)
	assert.Equal(t, Failure, got)
	assert.Contains(t, msg, "Client.Timeout exceeded")
}

func TestRunHTTPRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := int32(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())
	got, msg, err := Run(t.Context(), httpProbeSpec("/", port), Target{Host: "127.0.0.1"})
	require.NoError(t, err)
	assert.Equal(t, Failure, got)
	assert.Contains(t, msg, "connection refused")
}

func TestRunHTTPSDoesNotVerify(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	target, port := serverTarget(t, srv)
	p := httpProbeSpec("/", port)
	p.HTTPGet.Scheme = corev1.URISchemeHTTPS
	got, msg, err := Run(t.Context(), p, target)
	require.NoError(t, err)
	assert.Equal(t, Success, got, msg)
}

func TestRunHTTPReadsTenKiBOfBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 100<<10)))
	}))
	defer srv.Close()
	target, port := serverTarget(t, srv)
	got, msg, err := Run(t.Context(), httpProbeSpec("/", port), target)
	require.NoError(t, err)
	assert.Equal(t, Success, got)
	assert.Len(t, msg, 10<<10)
}

func TestRunHTTPEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	target, port := serverTarget(t, srv)
	p := httpProbeSpec("/", port)
	p.TimeoutSeconds = 3600
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got, msg, err := Run(ctx, p, target)
	require.NoError(t, err)
	assert.Equal(t, Failure, got)
	assert.Contains(t, msg, "context canceled")
}

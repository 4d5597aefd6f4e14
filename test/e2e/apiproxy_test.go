package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

// apiProxy stands between one agent and the API server, with that agent's own node identity
// (so the Node authorizer and NodeRestriction judge every request as before), and can answer a
// request the way a starting API server does. It makes a transient answer that real timing
// produces only now and then happen on every run.
type apiProxy struct {
	URL string
	// notFoundPodDeletes is how many pod DELETEs, once the API server answers again, get the 404
	// that NodeRestriction gives before its pod informer has synced — without reaching it.
	notFoundPodDeletes atomic.Int32
	injected           atomic.Int32
	// unreachable cuts the agent off: every request is dropped with no answer (the connection
	// or stream reset), as when the API server cannot be reached, while it may be up for others.
	unreachable atomic.Bool
}

var podPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods/([^/]+)$`)

func newAPIProxy(t *testing.T, node string) *apiProxy {
	t.Helper()
	nodeCfg, err := env.NodeConfig(node)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(nodeCfg)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := url.Parse(env.Host)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(upstream)
	forward.Transport = transport
	forward.FlushInterval = -1 // watches stream
	p := &apiProxy{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.unreachable.Load() {
			panic(http.ErrAbortHandler) // no answer: the connection (HTTP/2: the stream) is reset
		}
		if m := podPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodDelete &&
			p.notFoundPodDeletes.Load() > 0 && upstreamAnswers(r.Context(), transport) {
			p.notFoundPodDeletes.Add(-1)
			p.injected.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods %q not found","reason":"NotFound","details":{"name":%q,"kind":"pods"},"code":404}`, m[2], m[2])
			return
		}
		forward.ServeHTTP(w, r)
	}))
	certPEM, keyPEM, err := env.IssueServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// upstreamAnswers reports whether the API server answers HTTP at all (ready or not).
func upstreamAnswers(ctx context.Context, transport http.RoundTripper) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Host+"/livez", nil)
	if err != nil {
		return false
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

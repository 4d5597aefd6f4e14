package sources

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/podutil"
)

// manifestServer serves whatever the test sets, honouring If-None-Match.
type manifestServer struct {
	mu      sync.Mutex
	status  int
	body    string
	etag    string
	stall   bool // hold requests until the client gives up
	headers chan http.Header
	url     string
}

func (s *manifestServer) set(status int, body, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body, s.etag, s.stall = status, body, etag, false
}

func (s *manifestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status, body, etag, stall := s.status, s.body, s.etag, s.stall
	s.mu.Unlock()
	s.headers <- r.Header.Clone()
	if stall {
		<-r.Context().Done()
		return
	}
	if etag != "" {
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

type httpHarness struct {
	*sourceHarness
	server *manifestServer
	clock  *clocktesting.FakeClock
}

func (s *manifestServer) URLForTest() string { return s.url }

const httpFrequency = 20 * time.Second

// startHTTPSource starts a server answering status, body and etag, and a source polling it.
func startHTTPSource(t *testing.T, cfg HTTPConfig, status int, body, etag string) *httpHarness {
	t.Helper()
	ms := &manifestServer{headers: make(chan http.Header, 100)}
	ms.set(status, body, etag)
	ts := httptest.NewServer(ms)
	clk := clocktesting.NewFakeClock(time.Now())
	if cfg.URL == "" {
		cfg.URL = ts.URL + "/manifests"
	}
	ms.url = cfg.URL
	cfg.NodeName, cfg.Clock, cfg.CheckFrequency = "node-a", clk, httpFrequency
	src, err := NewHTTPSource(cfg)
	require.NoError(t, err)
	h := &httpHarness{server: ms, clock: clk}
	h.sourceHarness = startHarness(t, func(ctx context.Context, sh *sourceHarness) {
		src.cfg.Problems = sh.reporter()
		src.Run(ctx, sh.out)
	})
	t.Cleanup(ts.Close) // runs before the harness checks for leaked goroutines
	return h
}

// request waits for the source's next request and returns its headers.
func (h *httpHarness) request() http.Header {
	h.t.Helper()
	select {
	case hdr := <-h.server.headers:
		return hdr
	case <-time.After(10 * time.Second):
		h.t.Fatal("no request")
		return nil
	}
}

// tick makes the source poll again.
func (h *httpHarness) tick() {
	h.t.Helper()
	require.Eventually(h.t, h.clock.HasWaiters, 10*time.Second, time.Millisecond)
	h.clock.Step(httpFrequency)
}

// polled waits until the poll that made the last request has finished, reports included: the
// source polls one request at a time, so its next request (a tick away) comes only after it.
// A check that nothing was reported is worth something only after this.
func (h *httpHarness) polled() {
	h.t.Helper()
	h.tick()
	h.request()
}

const podList = `{"apiVersion":"v1","kind":"PodList","items":[
 {"metadata":{"name":"one"},"spec":{"containers":[{"name":"c","image":"i:1"}]}},
 {"metadata":{"name":"two"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}]}`

const onePod = "apiVersion: v1\nkind: Pod\nmetadata: {name: three}\nspec: {containers: [{name: c, image: 'i:1'}]}\n"

// The whole poll life: headers, 304, errors and garbage keep the last set, an empty body empties
// it. Each step's expect proves that the failures before it sent nothing: the source is
// sequential and the snapshot channel unbuffered, so a snapshot sent by a failed poll would be
// the one received.
func TestHTTPSource(t *testing.T) {
	h := startHTTPSource(t, HTTPConfig{Header: http.Header{"Authorization": {"Bearer t0ken"}, "X-Extra": {"a", "b"}}, Timeout: 200 * time.Millisecond},
		http.StatusOK, podList, `"v1"`)

	// First poll: headers sent, the set delivered.
	hdr := h.request()
	assert.Equal(t, "Bearer t0ken", hdr.Get("Authorization"))
	assert.Equal(t, []string{"a", "b"}, hdr.Values("X-Extra"))
	assert.Equal(t, UserAgent, hdr.Get("User-Agent"))
	assert.Empty(t, hdr.Get("If-None-Match"))
	h.expect(10*time.Second, "ADD http one-node-a two-node-a")
	assert.True(t, podutil.IsStaticPod(h.last.Pods[0]))
	assert.Equal(t, h.server.URLForTest(), h.last.Locations[h.last.Pods[0].UID])

	// 304: a conditional request, nothing changes.
	h.tick()
	assert.Equal(t, `"v1"`, h.request().Get("If-None-Match"))

	// 500, a timeout and garbage keep the last set. The failed fetches are the source being
	// unavailable, reported once per reason; garbage is reported once.
	h.server.set(http.StatusInternalServerError, "boom", "")
	h.tick()
	h.request()
	p := h.problem(10 * time.Second)
	assert.ErrorIs(t, p.Err, ErrSourceUnavailable)
	assert.ErrorContains(t, p.Err, "500")
	h.tick()
	h.request()
	h.polled() // the same failure again: not reported again
	h.noProblem()
	h.server.mu.Lock()
	h.server.stall = true
	h.server.mu.Unlock()
	h.tick()
	h.request()
	assert.ErrorIs(t, h.problem(10*time.Second).Err, ErrSourceUnavailable, "another reason")
	h.server.set(http.StatusOK, "{{{ not yaml", "")
	h.tick()
	h.request()
	p = h.problem(10 * time.Second)
	assert.Equal(t, podutil.HTTPSource, p.Source)
	assert.ErrorIs(t, p.Err, ErrSyntax)
	assert.ErrorIs(t, h.recovery(10*time.Second).Err, ErrSourceUnavailable, "fetched again")
	h.tick()
	h.request()
	h.polled() // the same garbage again, answered in full
	h.noProblem()

	// A changed body replaces the set.
	h.server.set(http.StatusOK, onePod, `"v2"`)
	h.tick()
	h.request()
	h.expect(10*time.Second, "REMOVE http one-node-a two-node-a", "ADD http three-node-a")

	// An empty 200 body is an explicit empty set.
	h.server.set(http.StatusOK, "", `"v3"`)
	h.tick()
	assert.Equal(t, `"v2"`, h.request().Get("If-None-Match"))
	h.expect(10*time.Second, "REMOVE http three-node-a")
	h.noProblem()
}

// The source is not seen before its first successful fetch.
func TestHTTPSourceNotSeenUntilFirstFetch(t *testing.T) {
	h := startHTTPSource(t, HTTPConfig{}, http.StatusServiceUnavailable, "", "")
	h.request()
	h.server.set(http.StatusOK, "", "")
	h.tick()
	h.request()
	h.expect(10 * time.Second) // the empty set, now seen
	assert.True(t, h.merger.Seen(podutil.HTTPSource))
}

func TestHTTPSourceCAFile(t *testing.T) {
	ms := &manifestServer{status: http.StatusOK, body: onePod, headers: make(chan http.Header, 10)}
	ts := httptest.NewTLSServer(ms)
	defer ts.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600))

	fetch := func(caFile string) error {
		src, err := NewHTTPSource(HTTPConfig{URL: ts.URL, NodeName: "n", CAFile: caFile})
		require.NoError(t, err)
		_, _, err = src.fetch(context.Background())
		return err
	}
	assert.NoError(t, fetch(caFile), "verified with the CA file")
	assert.ErrorContains(t, fetch(""), "certificate", "the system roots do not know the test CA")
}

func TestNewHTTPSourceValidates(t *testing.T) {
	for _, cfg := range []HTTPConfig{
		{URL: "ftp://example.com/m", NodeName: "n"},
		{URL: "file:///etc/manifests", NodeName: "n"},
		{URL: "http:///nohost", NodeName: "n"},
		{URL: "http://example.com/m"},
		{URL: "http://example.com/m", NodeName: "n", CAFile: "/does/not/exist"},
		{URL: "http://example.com/m", NodeName: "n", Timeout: -1},
	} {
		_, err := NewHTTPSource(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	src, err := NewHTTPSource(HTTPConfig{URL: "https://user:secret@example.com/m", NodeName: "n"})
	require.NoError(t, err)
	assert.NotContains(t, src.location, "secret", "credentials never appear in messages")
	assert.Equal(t, DefaultHTTPTimeout, src.cfg.Timeout)
	assert.Equal(t, DefaultHTTPCheckFrequency, src.cfg.CheckFrequency)
}

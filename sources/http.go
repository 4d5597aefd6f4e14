package sources

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/podutil"
)

// Defaults of the HTTP source (the kubelet's --http-check-frequency and its fixed timeout).
const (
	DefaultHTTPCheckFrequency = 20 * time.Second
	DefaultHTTPTimeout        = 10 * time.Second
	// UserAgent is sent unless HTTPConfig.Header sets one.
	UserAgent = "vk-static"
)

// HTTPConfig configures an HTTPSource.
type HTTPConfig struct {
	// URL is an http or https URL serving a manifest (same formats as files). Required.
	URL string
	// Header is sent with every request (--manifest-url-header).
	Header http.Header
	// NodeName is the node the static pods are for. Required.
	NodeName string
	// CheckFrequency is the poll period; 0 means DefaultHTTPCheckFrequency.
	CheckFrequency time.Duration
	// Timeout bounds each request including reading the body; 0 means DefaultHTTPTimeout.
	Timeout time.Duration
	// CAFile optionally adds PEM certificates to the system roots for verifying the server.
	CAFile string
	// Problems receives bodies that fail to decode (once per distinct body); nil: they are
	// only logged.
	Problems ProblemReporter
	// Clock drives the polling; nil means the real clock.
	Clock clock.WithTicker
	// Client replaces the default client (tests); CAFile is then ignored.
	Client *http.Client
}

// HTTPSource polls a manifest URL and sends a full snapshot whenever the served set changes.
// Conditional requests (If-None-Match / If-Modified-Since) make an unchanged manifest cheap; a
// 304 changes nothing. Transport errors, timeouts, non-2xx answers and bodies that fail to decode
// keep the last good set; an empty 200 body is an explicit empty set.
//
// The source is not seen (sends nothing) until the first successful fetch. A failed fetch is
// reported once as a Problem wrapping ErrSourceUnavailable (again only if the reason changes),
// and the next successful one as its recovery.
type HTTPSource struct {
	cfg      HTTPConfig
	url      string
	location string // the URL with credentials redacted, for the UID and messages
	client   *http.Client

	// Poll state, used by Run's goroutine only.
	etag, lastModified string
	goodDigest         [sha256.Size]byte
	haveGood           bool
	badDigest          [sha256.Size]byte
	fetching           availability // whether the URL can be fetched
}

// NewHTTPSource validates cfg and returns a source ready to Run.
func NewHTTPSource(cfg HTTPConfig) (*HTTPSource, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("sources: manifest URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sources: manifest URL %q: only http and https URLs with a host are supported", u.Redacted())
	}
	if cfg.NodeName == "" {
		return nil, errors.New("sources: HTTPConfig.NodeName is required")
	}
	if cfg.CheckFrequency < 0 || cfg.Timeout < 0 {
		return nil, errors.New("sources: HTTPConfig.CheckFrequency and Timeout must not be negative")
	}
	if cfg.CheckFrequency == 0 {
		cfg.CheckFrequency = DefaultHTTPCheckFrequency
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultHTTPTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	client := cfg.Client
	if client == nil {
		client, err = newHTTPClient(cfg.CAFile)
		if err != nil {
			return nil, err
		}
	}
	return &HTTPSource{cfg: cfg, url: u.String(), location: u.Redacted(), client: client}, nil
}

// newHTTPClient verifies servers with the system roots plus the certificates in caFile.
func newHTTPClient(caFile string) (*http.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("sources: manifest URL CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sources: manifest URL CA file %s holds no PEM certificate", caFile)
		}
		tlsConfig.RootCAs = pool
	}
	transport.TLSClientConfig = tlsConfig
	return &http.Client{Transport: transport}, nil
}

// Name is podutil.HTTPSource.
func (s *HTTPSource) Name() string { return podutil.HTTPSource }

// Run polls at once and then every CheckFrequency until ctx is done, sending a snapshot after
// each fetch that changed the set.
func (s *HTTPSource) Run(ctx context.Context, out chan<- Snapshot) {
	logger := klog.FromContext(ctx).WithValues("source", podutil.HTTPSource, "url", s.location)
	ctx = klog.NewContext(ctx, logger)
	ticker := s.cfg.Clock.NewTicker(s.cfg.CheckFrequency)
	defer ticker.Stop()
	// Keep-alive connections have goroutines of their own; they must not outlive Run.
	defer s.client.CloseIdleConnections()
	for {
		if snap, ok := s.poll(ctx); ok {
			select {
			case out <- snap:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

// poll fetches the URL once and returns a snapshot when the served set changed.
func (s *HTTPSource) poll(ctx context.Context) (Snapshot, bool) {
	logger := klog.FromContext(ctx)
	body, status, err := s.fetch(ctx)
	if err != nil {
		s.failed(logger, err)
		return Snapshot{}, false
	}
	s.fetching.available(logger, s.cfg.Problems)
	if status == http.StatusNotModified {
		logger.V(5).Info("Manifest not modified")
		return Snapshot{}, false
	}
	digest := sha256.Sum256(body)
	if s.haveGood && digest == s.goodDigest {
		return Snapshot{}, false
	}
	if digest == s.badDigest {
		return Snapshot{}, false // already reported
	}
	pods, err := DecodeManifest(body, DecodeOptions{NodeName: s.cfg.NodeName, Source: podutil.HTTPSource, Location: s.location, Clock: s.cfg.Clock})
	if err != nil {
		s.badDigest = digest
		report(logger, s.cfg.Problems, Problem{Source: podutil.HTTPSource, Location: s.location, Err: err})
		return Snapshot{}, false
	}
	s.goodDigest, s.haveGood, s.badDigest = digest, true, [sha256.Size]byte{}
	snap := Snapshot{Source: podutil.HTTPSource, Pods: pods, Locations: make(map[types.UID]string, len(pods))}
	for _, pod := range pods {
		snap.Locations[pod.UID] = s.location
	}
	return snap, true
}

// fetch makes one conditional GET. It returns the body of a 2xx answer, or the status 304; any
// other outcome is an error.
func (s *HTTPSource) fetch(ctx context.Context) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, 0, err
	}
	for name, values := range s.cfg.Header {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", UserAgent)
	}
	if s.etag != "" {
		req.Header.Set("If-None-Match", s.etag)
	}
	if s.lastModified != "" {
		req.Header.Set("If-Modified-Since", s.lastModified)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return nil, resp.StatusCode, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // lets the connection be reused
		return nil, resp.StatusCode, fmt.Errorf("GET %s: %s", s.location, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxManifestBytes+1))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("GET %s: reading the body: %w", s.location, err)
	}
	// Remember the validators only for a complete body; DecodeManifest rejects an oversized one.
	s.etag, s.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	return body, resp.StatusCode, nil
}

// failed reports a failed fetch once per distinct failure, not on every poll.
func (s *HTTPSource) failed(logger klog.Logger, err error) {
	logger.V(4).Info("Cannot fetch the manifest; keeping the last good set", "err", err)
	s.fetching.unavailable(logger, s.cfg.Problems, Problem{
		Source: podutil.HTTPSource, Location: s.location, Err: fmt.Errorf("%w: %w", ErrSourceUnavailable, err),
	})
}

package probe

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/klog/v2"
	utilio "k8s.io/utils/io"
)

const (
	// kubeVersion is the kubelet release whose User-Agent the agent sends ("kube-probe/1.36").
	kubeVersion = "1.36"
	// maxResponseBody is how much of a response body the kubelet reads (10 KiB).
	maxResponseBody = 10 << 10
	// maxRedirects is Go's default redirect limit, which the kubelet's checker keeps.
	maxRedirects = 10
)

// newHTTPRequest builds the GET for an httpGet action as the kubelet's
// NewRequestForHTTPGetAction: the scheme lowercased (http when empty), the action's host or
// t.host(), the port resolved against the container's ports, the path as written (query included),
// the action's headers, and — unless the action sets them — User-Agent "kube-<purpose>/1.36" and
// Accept "*/*" (an Accept set to "" removes it). A Host header becomes the request's Host.
func newHTTPRequest(ctx context.Context, action *corev1.HTTPGetAction, t Target, purpose string) (*http.Request, error) {
	scheme := strings.ToLower(string(action.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	host := action.Host
	if host == "" {
		host = t.host()
	}
	if host == "" {
		return nil, ErrNoHost
	}
	port, err := resolvePort(action.Port, t.Ports)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(action.Path)
	if err != nil {
		// The kubelet passes a path it cannot parse along as is.
		u = &url.URL{Path: action.Path}
	}
	u.Scheme = scheme
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	headers := make(http.Header)
	for _, h := range action.HTTPHeaders {
		headers.Add(h.Name, h.Value)
	}
	if _, ok := headers["User-Agent"]; !ok {
		headers.Set("User-Agent", "kube-"+purpose+"/"+kubeVersion)
	}
	if _, ok := headers["Accept"]; !ok {
		headers.Set("Accept", "*/*")
	} else if headers.Get("Accept") == "" {
		headers.Del("Accept")
	}
	req.Header = headers
	req.Host = headers.Get("Host")
	return req, nil
}

// sameHostRedirects follows redirects as the kubelet's RedirectChecker(false): to the same host
// name only (any port or scheme), at most 10; a redirect elsewhere ends with the 3xx response.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// newProbeTransport is the kubelet's probe transport: TLS without verification (the kubelet has
// nothing to verify a pod's certificate with), no proxy, no keep-alive (a probe is one request),
// no compression, the lingering dialer.
func newProbeTransport() *http.Transport {
	return utilnet.SetTransportDefaults(&http.Transport{
		TLSClientConfig:    &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet
		DisableKeepAlives:  true,
		Proxy:              http.ProxyURL(nil),
		DisableCompression: true,
		DialContext:        newDialer().DialContext,
	})
}

// httpProbe sends the GET and judges it as the kubelet's DoHTTPProbe: 200–299 passes with the body
// as message; 300–399 (a redirect not followed) passes with a warning; anything else fails with
// the status code only (the kubelet keeps response bodies out of failure messages); a transport
// error or the timeout fails with the error as message. Only a failure reading the body is an error.
func httpProbe(req *http.Request, timeout time.Duration) (outcome, string, error) {
	transport := newProbeTransport()
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: timeout, Transport: transport, CheckRedirect: sameHostRedirects}
	res, err := client.Do(req)
	if err != nil {
		return outcomeFailure, err.Error(), nil
	}
	defer func() { _ = res.Body.Close() }()
	b, err := utilio.ReadAtMost(res.Body, maxResponseBody)
	if err != nil && !errors.Is(err, utilio.ErrLimitReached) {
		return outcomeFailure, "", fmt.Errorf("reading the HTTP probe's response from %s: %w", req.URL.Redacted(), err)
	}
	body := string(b)
	logger := klog.FromContext(req.Context())
	switch {
	case res.StatusCode >= http.StatusMultipleChoices && res.StatusCode < http.StatusBadRequest:
		logger.V(4).Info("HTTP probe ended at a redirect", "url", req.URL.Redacted(), "status", res.StatusCode)
		return outcomeWarning, "Probe terminated redirects, Response body: " + body, nil
	case res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusMultipleChoices:
		return outcomeSuccess, body, nil
	default:
		logger.V(4).Info("HTTP probe failed", "url", req.URL.Redacted(), "status", res.StatusCode, "body", body)
		return outcomeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
	}
}

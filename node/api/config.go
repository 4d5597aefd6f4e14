package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cliflag "k8s.io/component-base/cli/flag"
)

// Authorization modes, named as the kubelet's --authorization-mode values.
const (
	// AuthorizationModeWebhook asks the API server with a SubjectAccessReview (needs
	// Config.SubjectAccessReviews).
	AuthorizationModeWebhook = "Webhook"
	// AuthorizationModeAlwaysAllow lets every authenticated request through.
	AuthorizationModeAlwaysAllow = "AlwaysAllow"
)

// The kubelet's defaults (KubeletConfiguration v1beta1).
const (
	DefaultAuthenticationCacheTTL = 2 * time.Minute
	DefaultAuthorizedCacheTTL     = 5 * time.Minute
	DefaultUnauthorizedCacheTTL   = 30 * time.Second
	// DefaultStreamingConnectionIdleTimeout is how long an exec, attach or port-forward
	// connection may carry nothing before it is closed (--streaming-connection-idle-timeout).
	DefaultStreamingConnectionIdleTimeout = 4 * time.Hour
)

// TokenReviewClient creates TokenReviews (authentication.k8s.io/v1): the one method of
// client-go's typed TokenReviewInterface the server calls, with its signature, so that
// client-go's typed clients (real or fake) and the agent's own client satisfy it, and the
// server links no clientset (whose scheme registers every API group).
type TokenReviewClient interface {
	Create(ctx context.Context, review *authenticationv1.TokenReview, opts metav1.CreateOptions) (*authenticationv1.TokenReview, error)
}

// SubjectAccessReviewClient creates SubjectAccessReviews (authorization.k8s.io/v1), as
// TokenReviewClient does TokenReviews.
type SubjectAccessReviewClient interface {
	Create(ctx context.Context, review *authorizationv1.SubjectAccessReview, opts metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error)
}

// Config is everything New needs. NodeName is required, and either TLSCertFile and
// TLSPrivateKeyFile or CertDirectory; every other field has a working zero value.
type Config struct {
	// NodeName is the name authorized against (resource nodes, this name) and the first name
	// of a self-signed certificate.
	NodeName string
	// TokenReviews asks the API server who a bearer token belongs to, and SubjectAccessReviews
	// whether a user may do what it asks: the node's client (its own identity is enough). Both
	// nil is standalone: only client certificates or anonymous requests can authenticate.
	TokenReviews         TokenReviewClient
	SubjectAccessReviews SubjectAccessReviewClient

	// Address is the IP to listen on; "" is 0.0.0.0 with a review client (the API server must
	// reach it) and 127.0.0.1 without.
	Address string
	// Port to listen on; 0 lets the kernel choose (Addr tells which, once Ready).
	Port int

	// TLSCertFile and TLSPrivateKeyFile are the serving certificate (with its intermediates)
	// and key, the kubelet's --tls-cert-file and --tls-private-key-file. Without them a
	// self-signed certificate is kept in CertDirectory.
	TLSCertFile       string
	TLSPrivateKeyFile string
	// ServingCertificate, when set, is asked on every TLS handshake for the certificate to
	// serve (the kubelet's --rotate-server-certificates: a certificate manager's Current); while
	// it returns nil, TLSCertFile or the self-signed certificate is served. It must not block.
	ServingCertificate func() *tls.Certificate
	// CertDirectory holds the self-signed certificate (kubelet.crt and kubelet.key, as in the
	// kubelet's --cert-dir), created if missing.
	CertDirectory string
	// Hosts are the DNS names and IP addresses a self-signed certificate is for, besides
	// NodeName and a specific Address: the node's addresses and hostnames.
	Hosts []string
	// TLSMinVersion is a crypto/tls version name such as VersionTLS12 (--tls-min-version); ""
	// is Go's default.
	TLSMinVersion string
	// TLSCipherSuites are cipher suite names as --tls-cipher-suites takes them; none is Go's
	// default. They do not apply to TLS 1.3.
	TLSCipherSuites []string

	// ClientCAFile authenticates client certificates it signed (--client-ca-file): the user is
	// the subject's common name, the groups its organizations.
	ClientCAFile string
	// Anonymous lets requests with no credentials through as system:anonymous (group
	// system:unauthenticated), to be authorized like any other (--anonymous-auth).
	Anonymous bool
	// DisableTokenWebhook turns off bearer-token authentication through TokenReview, which is
	// on whenever there are TokenReviews (--authentication-token-webhook=false).
	DisableTokenWebhook bool
	// AuthenticationCacheTTL is how long a TokenReview answer is reused; 0 is
	// DefaultAuthenticationCacheTTL, negative is not at all.
	AuthenticationCacheTTL time.Duration

	// LocalAdmin keeps a local CA in CertDirectory and, once the server listens, a kubeconfig
	// there for the local administrator (package localadmin): a client certificate it signed,
	// authenticated besides ClientCAFile and allowed everything before AuthorizationMode is
	// consulted — with Webhook, without asking the API server, which does not know the user.
	// The files are 0600 in a 0700 directory: whoever reads them is root on the machine.
	LocalAdmin bool

	// AuthorizationMode is AuthorizationModeWebhook ("" too) or AuthorizationModeAlwaysAllow.
	// Webhook without SubjectAccessReviews allows the local administrator only (LocalAdmin is
	// required).
	AuthorizationMode string
	// AuthorizedCacheTTL and UnauthorizedCacheTTL are how long an allowed and a denied
	// SubjectAccessReview answer is reused; 0 is the default, negative is not at all.
	AuthorizedCacheTTL   time.Duration
	UnauthorizedCacheTTL time.Duration

	// StreamingConnectionIdleTimeout closes an exec, attach or port-forward connection that has
	// carried nothing for that long (--streaming-connection-idle-timeout); 0 is
	// DefaultStreamingConnectionIdleTimeout, negative is never. The server does not use it
	// itself: whoever registers the stream routes passes it on (Routes.StreamIdleTimeout).
	StreamingConnectionIdleTimeout time.Duration

	// Profiling serves net/http/pprof under /debug/pprof/ (GET), as the kubelet's
	// enableProfilingHandler does on its API: authorized as nodes/proxy, the subresource of
	// every path that has none of its own. A profile shows what the agent's memory holds, and
	// /debug/pprof/cmdline its command line, so they are never served unauthenticated.
	Profiling bool

	// Configz is the configuration the agent runs with, served by GET /configz (authorized as
	// nodes/configz) as {"kubeletconfig": Configz}, as the kubelet serves its
	// KubeletConfiguration; it must encode as JSON. nil serves no /configz.
	Configz any
}

// complete returns c with the defaults filled in, or why it cannot work.
func (c Config) complete() (Config, error) {
	if c.NodeName == "" {
		return c, errors.New("api: Config.NodeName is required")
	}
	if c.Address == "" {
		c.Address = "127.0.0.1"
		if c.TokenReviews != nil || c.SubjectAccessReviews != nil {
			c.Address = "0.0.0.0"
		}
	}
	if net.ParseIP(c.Address) == nil {
		return c, fmt.Errorf("api: Config.Address %q is not an IP address", c.Address)
	}
	if c.Port < 0 || c.Port > 65535 {
		return c, fmt.Errorf("api: Config.Port %d is not a port", c.Port)
	}
	switch {
	case (c.TLSCertFile == "") != (c.TLSPrivateKeyFile == ""):
		return c, errors.New("api: Config.TLSCertFile and Config.TLSPrivateKeyFile go together")
	case c.TLSCertFile == "" && c.CertDirectory == "":
		return c, errors.New("api: Config.CertDirectory is required without Config.TLSCertFile")
	case c.LocalAdmin && c.CertDirectory == "":
		return c, errors.New("api: Config.CertDirectory is required with Config.LocalAdmin")
	}
	if _, err := cliflag.TLSVersion(c.TLSMinVersion); err != nil {
		return c, fmt.Errorf("api: Config.TLSMinVersion: %w", err)
	}
	if _, err := cliflag.TLSCipherSuites(c.TLSCipherSuites); err != nil {
		return c, fmt.Errorf("api: Config.TLSCipherSuites: %w", err)
	}
	if c.ClientCAFile == "" && !c.Anonymous && !c.LocalAdmin && !c.tokenWebhook() {
		return c, errors.New("api: no way to authenticate a request: set Config.ClientCAFile, Config.Anonymous or Config.LocalAdmin, or give Config.TokenReviews for bearer tokens")
	}
	if c.AuthorizationMode == "" {
		c.AuthorizationMode = AuthorizationModeWebhook
	}
	switch c.AuthorizationMode {
	case AuthorizationModeWebhook:
		if c.SubjectAccessReviews == nil && !c.LocalAdmin {
			return c, errors.New("api: authorization mode Webhook needs Config.SubjectAccessReviews to ask the API server; without them, AlwaysAllow must be chosen explicitly (or LocalAdmin, the only user then allowed)")
		}
	case AuthorizationModeAlwaysAllow:
	default:
		return c, fmt.Errorf("api: unknown authorization mode %q (want %s or %s)", c.AuthorizationMode, AuthorizationModeWebhook, AuthorizationModeAlwaysAllow)
	}
	c.AuthenticationCacheTTL = ttl(c.AuthenticationCacheTTL, DefaultAuthenticationCacheTTL)
	c.AuthorizedCacheTTL = ttl(c.AuthorizedCacheTTL, DefaultAuthorizedCacheTTL)
	c.UnauthorizedCacheTTL = ttl(c.UnauthorizedCacheTTL, DefaultUnauthorizedCacheTTL)
	return c, nil
}

// tokenWebhook reports whether bearer tokens are authenticated through TokenReview.
func (c Config) tokenWebhook() bool { return c.TokenReviews != nil && !c.DisableTokenWebhook }

// ttl maps the Config convention (0 default, negative none) to the caches' (0 none).
func ttl(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

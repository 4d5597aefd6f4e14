package app

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/node/api"
)

// addKubeletAPIFlags registers the kubelet's flags for its HTTP API's TLS, authentication and
// authorization, with the KubeletConfiguration's defaults.
func (o *options) addKubeletAPIFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "Serving certificate of the kubelet API (intermediates after it). Without it and --tls-private-key-file, a self-signed certificate for the node's name and addresses is kept in <root-dir>/pki and reused while it serves them. Re-read when it changes.")
	fs.StringVar(&o.TLSPrivateKeyFile, "tls-private-key-file", o.TLSPrivateKeyFile, "Private key of --tls-cert-file.")
	fs.StringVar(&o.TLSMinVersion, "tls-min-version", o.TLSMinVersion, "Minimum TLS version of the kubelet API (default: Go's, TLS 1.2). Possible values: "+strings.Join(cliflag.TLSPossibleVersions(), ", ")+".")
	fs.StringSliceVar(&o.TLSCipherSuites, "tls-cipher-suites", o.TLSCipherSuites, "Cipher suites of the kubelet API for TLS 1.2 and below, comma-separated (default: Go's). Preferred values: "+strings.Join(cliflag.PreferredTLSCipherNames(), ", ")+". Insecure values: "+strings.Join(cliflag.InsecureTLSCipherNames(), ", ")+".")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "A client certificate signed by a CA in this file authenticates to the kubelet API as its subject's common name, in its organizations as groups (the API server's kubelet client certificate, say). Re-read when it changes.")
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "Let kubelet API requests without credentials through to authorization, as system:anonymous in group system:unauthenticated.")
	fs.BoolVar(&o.AuthenticationTokenWebhook, "authentication-token-webhook", o.AuthenticationTokenWebhook, "Authenticate bearer tokens to the kubelet API through TokenReviews with the API server (with --kubeconfig only; without, there is no API server to ask).")
	fs.DurationVar(&o.AuthenticationTokenWebhookCacheTTL, "authentication-token-webhook-cache-ttl", o.AuthenticationTokenWebhookCacheTTL, "How long a TokenReview's answer is reused; 0 not at all.")
	fs.StringVar(&o.AuthorizationMode, "authorization-mode", o.AuthorizationMode, "How kubelet API requests are authorized: Webhook (a SubjectAccessReview with the API server, for nodes/<node> and a subresource such as proxy, log or stats; without --kubeconfig, nobody but the local administrator) or AlwaysAllow (every authenticated request). The local administrator (<root-dir>/pki/local-admin.kubeconfig, what vk-static pods and logs use) is allowed either way, without asking the API server.")
	fs.DurationVar(&o.AuthorizationWebhookCacheAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.AuthorizationWebhookCacheAuthorizedTTL, "How long an allowing SubjectAccessReview's answer is reused; 0 not at all.")
	fs.DurationVar(&o.AuthorizationWebhookCacheUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.AuthorizationWebhookCacheUnauthorizedTTL, "How long a denying SubjectAccessReview's answer is reused; 0 not at all.")
	fs.DurationVar(&o.StreamingConnectionIdleTimeout, "streaming-connection-idle-timeout", o.StreamingConnectionIdleTimeout, "How long an exec, attach or port-forward connection may carry nothing before it is closed; 0 never.")
}

// applyKubeletAPIConfig applies a KubeletConfiguration's kubelet API fields to o through set
// (which skips flags given on the command line). A zero duration is unset, as the kubelet's
// defaulting reads it.
func applyKubeletAPIConfig(cfg *kubeletv1beta1.KubeletConfiguration, o *options, set func(flag string, apply func())) {
	if cfg.TLSCertFile != "" {
		set("tls-cert-file", func() { o.TLSCertFile = cfg.TLSCertFile })
	}
	if cfg.TLSPrivateKeyFile != "" {
		set("tls-private-key-file", func() { o.TLSPrivateKeyFile = cfg.TLSPrivateKeyFile })
	}
	if cfg.TLSMinVersion != "" {
		set("tls-min-version", func() { o.TLSMinVersion = cfg.TLSMinVersion })
	}
	if len(cfg.TLSCipherSuites) > 0 {
		set("tls-cipher-suites", func() { o.TLSCipherSuites = cfg.TLSCipherSuites })
	}
	authn, authz := cfg.Authentication, cfg.Authorization
	if authn.X509.ClientCAFile != "" {
		set("client-ca-file", func() { o.ClientCAFile = authn.X509.ClientCAFile })
	}
	if authn.Anonymous.Enabled != nil {
		set("anonymous-auth", func() { o.AnonymousAuth = *authn.Anonymous.Enabled })
	}
	if authn.Webhook.Enabled != nil {
		set("authentication-token-webhook", func() { o.AuthenticationTokenWebhook = *authn.Webhook.Enabled })
	}
	if authn.Webhook.CacheTTL.Duration != 0 {
		set("authentication-token-webhook-cache-ttl", func() { o.AuthenticationTokenWebhookCacheTTL = authn.Webhook.CacheTTL.Duration })
	}
	if authz.Mode != "" {
		set("authorization-mode", func() { o.AuthorizationMode = string(authz.Mode) })
	}
	if authz.Webhook.CacheAuthorizedTTL.Duration != 0 {
		set("authorization-webhook-cache-authorized-ttl", func() { o.AuthorizationWebhookCacheAuthorizedTTL = authz.Webhook.CacheAuthorizedTTL.Duration })
	}
	if authz.Webhook.CacheUnauthorizedTTL.Duration != 0 {
		set("authorization-webhook-cache-unauthorized-ttl", func() { o.AuthorizationWebhookCacheUnauthorizedTTL = authz.Webhook.CacheUnauthorizedTTL.Duration })
	}
	if cfg.StreamingConnectionIdleTimeout.Duration != 0 {
		set("streaming-connection-idle-timeout", func() { o.StreamingConnectionIdleTimeout = cfg.StreamingConnectionIdleTimeout.Duration })
	}
}

// validateKubeletAPI checks the kubelet API's options, naming the flag that is wrong.
func (o *options) validateKubeletAPI(bad func(flag, format string, args ...any)) {
	if (o.TLSCertFile == "") != (o.TLSPrivateKeyFile == "") {
		bad("tls-cert-file", "and --tls-private-key-file go together")
	}
	if _, err := cliflag.TLSVersion(o.TLSMinVersion); err != nil {
		bad("tls-min-version", "%v", err)
	}
	if _, err := cliflag.TLSCipherSuites(o.TLSCipherSuites); err != nil {
		bad("tls-cipher-suites", "%v", err)
	}
	switch o.AuthorizationMode {
	case api.AuthorizationModeWebhook, api.AuthorizationModeAlwaysAllow:
	default:
		bad("authorization-mode", "%q is not Webhook or AlwaysAllow", o.AuthorizationMode)
	}
	for flag, d := range map[string]time.Duration{
		"authentication-token-webhook-cache-ttl":       o.AuthenticationTokenWebhookCacheTTL,
		"authorization-webhook-cache-authorized-ttl":   o.AuthorizationWebhookCacheAuthorizedTTL,
		"authorization-webhook-cache-unauthorized-ttl": o.AuthorizationWebhookCacheUnauthorizedTTL,
		"streaming-connection-idle-timeout":            o.StreamingConnectionIdleTimeout,
	} {
		if d < 0 {
			bad(flag, "must not be negative, got %s", d)
		}
	}
	if _, why := o.kubeletAPI(); why != "" {
		return // not served: nothing more can be wrong
	}
	standalone := o.Kubeconfig == ""
	// Standalone, Webhook allows the local administrator only: the users of a client CA or
	// anonymous requests would be authenticated and then refused everything.
	if standalone && o.AuthorizationMode == api.AuthorizationModeWebhook && (o.ClientCAFile != "" || o.AnonymousAuth) {
		bad("authorization-mode", "Webhook asks the API server, and without --kubeconfig there is none: only the local administrator would be allowed; choose AlwaysAllow to let --client-ca-file's users or --anonymous-auth's requests in")
	}
	if !standalone && !o.AuthenticationTokenWebhook && o.ClientCAFile == "" && !o.AnonymousAuth {
		bad("authentication-token-webhook", "off, with neither --client-ca-file nor --anonymous-auth: nothing could authenticate to the kubelet API (--port 0 serves none)")
	}
}

// kubeletAPI is the kubelet API the options ask for, or nil and why none is served (--port 0).
// It always has a local administrator (the credential `vk-static pods` and `vk-static logs`
// use, in <root-dir>/pki): so standalone, with no API server to authenticate anyone, it is
// served too — on 127.0.0.1 unless --address says otherwise, to the local administrator only
// unless --client-ca-file or --anonymous-auth, with AlwaysAllow, let others in.
func (o *options) kubeletAPI() (*api.Config, string) {
	if o.Port == 0 {
		return nil, "--port is 0"
	}
	return &api.Config{
		Address:                o.Address,
		Port:                   int(o.Port),
		TLSCertFile:            o.TLSCertFile,
		TLSPrivateKeyFile:      o.TLSPrivateKeyFile,
		CertDirectory:          filepath.Join(o.RootDir, "pki"), // the kubelet's --cert-dir is <root-dir>/pki too
		TLSMinVersion:          o.TLSMinVersion,
		TLSCipherSuites:        o.TLSCipherSuites,
		ClientCAFile:           o.ClientCAFile,
		Anonymous:              o.AnonymousAuth,
		LocalAdmin:             true,
		DisableTokenWebhook:    !o.AuthenticationTokenWebhook,
		AuthenticationCacheTTL: cacheTTL(o.AuthenticationTokenWebhookCacheTTL),
		AuthorizationMode:      o.AuthorizationMode,
		AuthorizedCacheTTL:     cacheTTL(o.AuthorizationWebhookCacheAuthorizedTTL),
		UnauthorizedCacheTTL:   cacheTTL(o.AuthorizationWebhookCacheUnauthorizedTTL),
		// 0 is never for the flag, as cacheTTL's.
		StreamingConnectionIdleTimeout: cacheTTL(o.StreamingConnectionIdleTimeout),
		Profiling:                      o.Profiling,
		Configz:                        o.kubeletConfiguration(),
	}, ""
}

// cacheTTL maps a flag's 0 (no caching, or no timeout, as for the kubelet) to api.Config's
// negative (its 0 is the default).
func cacheTTL(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

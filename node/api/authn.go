package api

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// webhookRetryBackoff is k8s.io/apiserver's DefaultAuthWebhookRetryBackoff, which the kubelet
// uses for both webhooks. Copied: its package (pkg/server/options) would bring in the whole
// generic API server, etcd client included.
func webhookRetryBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// newAuthenticator is the kubelet's authenticator (cmd/kubelet/app/auth.go BuildAuthn): client
// certificates signed by clientCA (nil: none), bearer tokens through TokenReview when there is a
// Client, answers cached for the TTL, and anonymous requests when allowed.
func newAuthenticator(c Config, clientCA dynamiccertificates.CAContentProvider) (authenticator.Request, error) {
	cfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                          &apiserver.AnonymousAuthConfig{Enabled: c.Anonymous},
		CacheTTL:                           c.AuthenticationCacheTTL,
		ClientCertificateCAContentProvider: clientCA,
	}
	if c.Client != nil && !c.DisableTokenWebhook {
		cfg.TokenAccessReviewClient = c.Client.AuthenticationV1()
		cfg.WebhookRetryBackoff = webhookRetryBackoff()
	}
	authn, _, err := cfg.New()
	return authn, err
}

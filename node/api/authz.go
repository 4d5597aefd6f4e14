package api

import (
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
)

// newAuthorizer is the kubelet's authorizer (cmd/kubelet/app/auth.go BuildAuthz) for a completed
// Config: SubjectAccessReview through the Client with both answers cached, or AlwaysAllow.
// Webhook without a Client (complete allows it only with a local administrator, whom
// withLocalAdmin allows first) denies everyone.
func newAuthorizer(c Config) (authorizer.Authorizer, error) {
	switch {
	case c.AuthorizationMode == AuthorizationModeAlwaysAllow:
		return authorizerfactory.NewAlwaysAllowAuthorizer(), nil
	case c.Client == nil:
		return authorizerfactory.NewAlwaysDenyAuthorizer(), nil
	}
	return authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: c.Client.AuthorizationV1(),
		AllowCacheTTL:             c.AuthorizedCacheTTL,
		DenyCacheTTL:              c.UnauthorizedCacheTTL,
		WebhookRetryBackoff:       webhookRetryBackoff(),
	}.New()
}

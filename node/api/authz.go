package api

import (
	"context"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/clock"
)

// newAuthorizer is the kubelet's authorizer (cmd/kubelet/app/auth.go BuildAuthz) for a completed
// Config: SubjectAccessReview through Config.SubjectAccessReviews with both answers cached, or
// AlwaysAllow. Webhook without them (complete allows it only with a local administrator, whom
// localAdmin.authorizer allows first) denies everyone.
func newAuthorizer(c Config) authorizer.Authorizer {
	switch {
	case c.AuthorizationMode == AuthorizationModeAlwaysAllow:
		return alwaysAllow{}
	case c.SubjectAccessReviews == nil:
		return alwaysDeny{}
	}
	return newSubjectAccessReviewAuthorizer(c.SubjectAccessReviews,
		c.AuthorizedCacheTTL, c.UnauthorizedCacheTTL, webhookRetryBackoff(), clock.RealClock{})
}

// alwaysAllow and alwaysDeny are k8s.io/apiserver's AlwaysAllow and AlwaysDeny authorizers,
// whose package (authorizerfactory) brings in the webhook authorizer and CEL.
type (
	alwaysAllow struct{}
	alwaysDeny  struct{}
)

func (alwaysAllow) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

func (alwaysDeny) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "Everything is forbidden.", nil
}

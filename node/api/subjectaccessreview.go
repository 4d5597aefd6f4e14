package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/utils/clock"
)

const (
	// reviewCacheSize bounds the SubjectAccessReview answers kept, as k8s.io/apiserver's
	// webhook authorizer bounds its own.
	reviewCacheSize = 8192
	// maxCachedAttributesSize is the most bytes of attributes a request controls (namespace,
	// verb, group, version, resource, subresource, name, path) whose answer is kept, the
	// webhook authorizer's limit: a caller cannot fill the cache with huge keys.
	maxCachedAttributesSize = 10000
)

// subjectAccessReviewAuthorizer asks the API server whether a user may do what it asks with a
// SubjectAccessReview (authorization.k8s.io/v1), as the kubelet's delegating authorizer does
// (k8s.io/apiserver's webhook authorizer, whose package brings in CEL for match conditions the
// kubelet never sets): allowed is DecisionAllow, denied DecisionDeny with the reason, neither
// DecisionNoOpinion; a review that fails, retries spent, is DecisionNoOpinion and the error.
// Allowed answers are reused for allowedTTL, the others for deniedTTL (0: never), keyed by the
// review's whole spec; failures never are.
type subjectAccessReviewAuthorizer struct {
	reviews               SubjectAccessReviewClient
	backoff               wait.Backoff
	allowedTTL, deniedTTL time.Duration
	answers               *cache.LRUExpireCache // the spec's JSON → SubjectAccessReviewStatus
}

func newSubjectAccessReviewAuthorizer(reviews SubjectAccessReviewClient, allowedTTL, deniedTTL time.Duration, backoff wait.Backoff, clk clock.PassiveClock) *subjectAccessReviewAuthorizer {
	return &subjectAccessReviewAuthorizer{reviews: reviews, backoff: backoff, allowedTTL: allowedTTL, deniedTTL: deniedTTL,
		answers: cache.NewLRUExpireCacheWithClock(reviewCacheSize, clk)}
}

// Authorize implements authorizer.Authorizer.
func (a *subjectAccessReviewAuthorizer) Authorize(ctx context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	spec := subjectAccessReviewSpec(attr)
	key, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	var status authorizationv1.SubjectAccessReviewStatus
	if v, ok := a.answers.Get(string(key)); ok {
		status = v.(authorizationv1.SubjectAccessReviewStatus)
	} else {
		var result *authorizationv1.SubjectAccessReview
		err := withRetry(ctx, a.backoff, func(ctx context.Context) (err error) {
			result, err = a.reviews.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return authorizer.DecisionNoOpinion, "", fmt.Errorf("SubjectAccessReview: %w", err)
		}
		status = result.Status
		if ttl := a.ttl(status); ttl > 0 && attributesSize(attr) < maxCachedAttributesSize {
			a.answers.Add(string(key), status, ttl)
		}
	}
	switch {
	case status.Denied && status.Allowed:
		return authorizer.DecisionDeny, status.Reason, errors.New("SubjectAccessReview: both allowed and denied")
	case status.Denied:
		return authorizer.DecisionDeny, status.Reason, nil
	case status.Allowed:
		return authorizer.DecisionAllow, status.Reason, nil
	}
	return authorizer.DecisionNoOpinion, status.Reason, nil
}

func (a *subjectAccessReviewAuthorizer) ttl(status authorizationv1.SubjectAccessReviewStatus) time.Duration {
	if status.Allowed {
		return a.allowedTTL
	}
	return a.deniedTTL
}

// subjectAccessReviewSpec is what attr asks, as the webhook authorizer puts it. The kubelet's
// attributes carry no field or label selectors, so none are sent.
func subjectAccessReviewSpec(attr authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if u := attr.GetUser(); u != nil {
		spec.User, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
		if extra := u.GetExtra(); extra != nil {
			spec.Extra = make(map[string]authorizationv1.ExtraValue, len(extra))
			for k, v := range extra {
				spec.Extra[k] = v
			}
		}
	}
	if attr.IsResourceRequest() {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
			Namespace:   attr.GetNamespace(),
			Verb:        attr.GetVerb(),
			Group:       attr.GetAPIGroup(),
			Version:     attr.GetAPIVersion(),
			Resource:    attr.GetResource(),
			Subresource: attr.GetSubresource(),
			Name:        attr.GetName(),
		}
	} else {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attr.GetPath(), Verb: attr.GetVerb()}
	}
	return spec
}

// attributesSize is how many bytes of attr its request controls.
func attributesSize(attr authorizer.Attributes) int {
	return len(attr.GetNamespace()) + len(attr.GetVerb()) + len(attr.GetAPIGroup()) + len(attr.GetAPIVersion()) +
		len(attr.GetResource()) + len(attr.GetSubresource()) + len(attr.GetName()) + len(attr.GetPath())
}

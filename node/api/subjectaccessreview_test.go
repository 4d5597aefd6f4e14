package api

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// reviewAPI is a fake API server's SubjectAccessReview.
type (
	reviewAPI       = fakeReview[authorizationv1.SubjectAccessReviewSpec, authorizationv1.SubjectAccessReviewStatus]
	reviewAPIAnswer = reviewAnswer[authorizationv1.SubjectAccessReviewStatus]
)

// reviewClient is a typed client of api's SubjectAccessReviews, as a Config takes them.
func reviewClient(api *reviewAPI) SubjectAccessReviewClient {
	return api.client("subjectaccessreviews",
		func(o runtime.Object) authorizationv1.SubjectAccessReviewSpec {
			return o.(*authorizationv1.SubjectAccessReview).Spec
		},
		func(spec authorizationv1.SubjectAccessReviewSpec, status authorizationv1.SubjectAccessReviewStatus) runtime.Object {
			return &authorizationv1.SubjectAccessReview{Spec: spec, Status: status}
		}).AuthorizationV1().SubjectAccessReviews()
}

func reviewAuthorizer(api *reviewAPI, clk *clocktesting.FakeClock) *subjectAccessReviewAuthorizer {
	return newSubjectAccessReviewAuthorizer(reviewClient(api),
		DefaultAuthorizedCacheTTL, DefaultUnauthorizedCacheTTL, testBackoff(), clk)
}

// nodeAttributes asks for verb on nodes/<subresource> of node-a as u.
func nodeAttributes(u user.Info, verb, subresource string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: u, Verb: verb, APIVersion: "v1", Resource: "nodes",
		Subresource: subresource, Name: "node-a", ResourceRequest: true, Path: "/pods"}
}

// What a SubjectAccessReview answers becomes the authorizer's decision, and the review carries
// everything the attributes say.
func TestSubjectAccessReviewAuthorizer(t *testing.T) {
	resourceRequest := nodeAttributes(alice, "get", "proxy")
	for _, tc := range []struct {
		name         string
		attrs        authorizer.Attributes
		answers      []reviewAPIAnswer
		wantDecision authorizer.Decision
		wantReason   string
		wantErr      string
		wantCalls    int
	}{{
		name: "allowed", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: "RBAC: allowed"}}},
		wantDecision: authorizer.DecisionAllow, wantReason: "RBAC: allowed", wantCalls: 1,
	}, {
		name: "denied", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "not on my node"}}},
		wantDecision: authorizer.DecisionDeny, wantReason: "not on my node", wantCalls: 1,
	}, {
		name: "neither", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Reason: "no RBAC policy matched"}}},
		wantDecision: authorizer.DecisionNoOpinion, wantReason: "no RBAC policy matched", wantCalls: 1,
	}, {
		name: "both", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Denied: true}}},
		wantDecision: authorizer.DecisionDeny, wantErr: "both allowed and denied", wantCalls: 1,
	}, {
		name: "an API error not worth retrying", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{err: errForbidden}},
		wantDecision: authorizer.DecisionNoOpinion, wantErr: "forbidden", wantCalls: 1,
	}, {
		name: "retried on 500, then allowed", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{err: errInternal}, {status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}}},
		wantDecision: authorizer.DecisionAllow, wantCalls: 2,
	}, {
		name: "retries spent", attrs: resourceRequest,
		answers:      []reviewAPIAnswer{{err: errTooMany}},
		wantDecision: authorizer.DecisionNoOpinion, wantErr: "slow down", wantCalls: 5,
	}, {
		name:         "a non-resource request",
		attrs:        authorizer.AttributesRecord{User: alice, Verb: "get", Path: "/healthz"},
		answers:      []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}}},
		wantDecision: authorizer.DecisionAllow, wantCalls: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			api := &reviewAPI{answers: tc.answers}
			decision, reason, err := reviewAuthorizer(api, clocktesting.NewFakeClock(time.Now())).Authorize(context.Background(), tc.attrs)
			assert.Equal(t, tc.wantDecision, decision)
			assert.Equal(t, tc.wantReason, reason)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.wantCalls, api.calls())
			want := authorizationv1.SubjectAccessReviewSpec{User: "alice", UID: "alice-uid", Groups: []string{"devs"},
				Extra: map[string]authorizationv1.ExtraValue{"scopes": {"a", "b"}}}
			if tc.attrs.IsResourceRequest() {
				want.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "proxy", Name: "node-a"}
			} else {
				want.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}
			}
			for _, spec := range api.asked {
				assert.Equal(t, want, spec)
			}
		})
	}
}

// Allowed answers are reused for the authorized TTL, the others for the unauthorized one, each
// for exactly the attributes asked; failures never are.
func TestSubjectAccessReviewCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer reviewAPIAnswer
		cached bool
		ttl    time.Duration // how long it is reused, or is not
	}{
		{name: "allowed", answer: reviewAPIAnswer{status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}}, cached: true, ttl: DefaultAuthorizedCacheTTL},
		{name: "denied", answer: reviewAPIAnswer{status: authorizationv1.SubjectAccessReviewStatus{Denied: true}}, cached: true, ttl: DefaultUnauthorizedCacheTTL},
		{name: "no opinion", answer: reviewAPIAnswer{status: authorizationv1.SubjectAccessReviewStatus{}}, cached: true, ttl: DefaultUnauthorizedCacheTTL},
		{name: "an error", answer: reviewAPIAnswer{err: errForbidden}, ttl: DefaultAuthorizedCacheTTL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &reviewAPI{answers: []reviewAPIAnswer{tc.answer}}
			clk := clocktesting.NewFakeClock(time.Now())
			authz := reviewAuthorizer(api, clk)
			wantCalls := 0
			ask := func(attrs authorizer.Attributes, reused bool, msg string) {
				t.Helper()
				first, _, _ := authz.Authorize(context.Background(), attrs)
				if !reused {
					wantCalls++
				}
				assert.Equal(t, wantCalls, api.calls(), msg)
				decision, _, _ := authz.Authorize(context.Background(), attrs) // reused, if ever
				if !tc.cached {
					wantCalls++
				}
				assert.Equal(t, wantCalls, api.calls(), msg+", asked again at once")
				assert.Equal(t, first, decision)
			}
			cached := tc.cached
			attrs := nodeAttributes(alice, "get", "proxy")
			ask(attrs, false, "first")
			clk.Step(tc.ttl - time.Second)
			ask(attrs, cached, "just before the TTL")
			ask(nodeAttributes(alice, "get", "pods"), false, "another subresource")
			ask(nodeAttributes(alice, "create", "proxy"), false, "another verb")
			ask(nodeAttributes(&user.DefaultInfo{Name: "alice"}, "get", "proxy"), false, "the same name, other groups")
			withPath := nodeAttributes(alice, "get", "proxy")
			withPath.Path = "/exec/ns/pod/c"
			ask(withPath, cached, "another path, which the review does not carry")
			clk.Step(2 * time.Second)
			ask(attrs, false, "after the TTL")
		})
	}
}

// Attributes larger than the webhook authorizer caches are asked every time.
func TestSubjectAccessReviewCacheSkipsHugeAttributes(t *testing.T) {
	api := &reviewAPI{answers: []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}}}}
	authz := reviewAuthorizer(api, clocktesting.NewFakeClock(time.Now()))
	attrs := nodeAttributes(alice, "get", "proxy")
	attrs.Path = "/" + string(make([]byte, maxCachedAttributesSize))
	for range 2 {
		decision, _, err := authz.Authorize(context.Background(), attrs)
		assert.NoError(t, err)
		assert.Equal(t, authorizer.DecisionAllow, decision)
	}
	assert.Equal(t, 2, api.calls())
}

// The authorizer New builds for each mode.
func TestNewAuthorizer(t *testing.T) {
	attrs := nodeAttributes(alice, "get", "proxy")
	for _, tc := range []struct {
		name         string
		cfg          Config
		wantDecision authorizer.Decision
		wantCalls    int
	}{
		{name: "AlwaysAllow", cfg: Config{AuthorizationMode: AuthorizationModeAlwaysAllow}, wantDecision: authorizer.DecisionAllow},
		{name: "AlwaysAllow with a client", cfg: Config{AuthorizationMode: AuthorizationModeAlwaysAllow, SubjectAccessReviews: fake.NewClientset().AuthorizationV1().SubjectAccessReviews()}, wantDecision: authorizer.DecisionAllow},
		{name: "Webhook without a client denies", cfg: Config{AuthorizationMode: AuthorizationModeWebhook}, wantDecision: authorizer.DecisionDeny},
		{name: "Webhook asks", cfg: Config{AuthorizationMode: AuthorizationModeWebhook}, wantDecision: authorizer.DecisionAllow, wantCalls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &reviewAPI{answers: []reviewAPIAnswer{{status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}}}}
			if tc.wantCalls > 0 {
				tc.cfg.SubjectAccessReviews = reviewClient(api)
			}
			decision, _, err := newAuthorizer(tc.cfg).Authorize(context.Background(), attrs)
			assert.NoError(t, err)
			assert.Equal(t, tc.wantDecision, decision)
			assert.Equal(t, tc.wantCalls, api.calls())
		})
	}
}

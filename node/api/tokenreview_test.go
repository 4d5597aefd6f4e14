package api

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	clocktesting "k8s.io/utils/clock/testing"
)

// tokenAPI is a fake API server's TokenReview.
type (
	tokenAPI       = fakeReview[authenticationv1.TokenReviewSpec, authenticationv1.TokenReviewStatus]
	tokenAPIAnswer = reviewAnswer[authenticationv1.TokenReviewStatus]
)

// tokenClient is a typed client of api's TokenReviews, as a Config takes them.
func tokenClient(api *tokenAPI) TokenReviewClient {
	return api.client("tokenreviews",
		func(o runtime.Object) authenticationv1.TokenReviewSpec { return o.(*authenticationv1.TokenReview).Spec },
		func(spec authenticationv1.TokenReviewSpec, status authenticationv1.TokenReviewStatus) runtime.Object {
			return &authenticationv1.TokenReview{Spec: spec, Status: status}
		}).AuthenticationV1().TokenReviews()
}

func tokenAuthenticator(api *tokenAPI, ttl time.Duration, clk *clocktesting.FakeClock) *tokenReviewAuthenticator {
	return newTokenReviewAuthenticator(tokenClient(api), ttl, testBackoff(), clk)
}

var aliceStatus = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
	Username: "alice", UID: "alice-uid", Groups: []string{"devs"},
	Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a", "b"}},
}}

var alice = &user.DefaultInfo{Name: "alice", UID: "alice-uid", Groups: []string{"devs"},
	Extra: map[string][]string{"scopes": {"a", "b"}}}

// What a TokenReview answers becomes the authenticator's answer, retried when the API server
// may answer better later.
func TestTokenReviewAuthenticator(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answers   []tokenAPIAnswer
		wantUser  user.Info // nil: not authenticated
		wantErr   string
		wantCalls int
	}{{
		name:    "authenticated",
		answers: []tokenAPIAnswer{{status: aliceStatus}}, wantUser: alice, wantCalls: 1,
	}, {
		name:    "not authenticated",
		answers: []tokenAPIAnswer{{}}, wantCalls: 1,
	}, {
		name:    "the review's error",
		answers: []tokenAPIAnswer{{status: authenticationv1.TokenReviewStatus{Error: "token expired"}}},
		wantErr: "token expired", wantCalls: 1,
	}, {
		name:    "an API error not worth retrying",
		answers: []tokenAPIAnswer{{err: errForbidden}}, wantErr: "forbidden", wantCalls: 1,
	}, {
		name:    "retried on 500, then authenticated",
		answers: []tokenAPIAnswer{{err: errInternal}, {status: aliceStatus}}, wantUser: alice, wantCalls: 2,
	}, {
		name:    "retried on 429, then not authenticated",
		answers: []tokenAPIAnswer{{err: errTooMany}, {err: errTooMany}, {}}, wantCalls: 3,
	}, {
		name:    "retries spent",
		answers: []tokenAPIAnswer{{err: errInternal}}, wantErr: "etcd is away", wantCalls: 5,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			api := &tokenAPI{answers: tc.answers}
			resp, ok, err := tokenAuthenticator(api, time.Minute, clocktesting.NewFakeClock(time.Now())).
				AuthenticateToken(context.Background(), "the-token")
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.wantUser != nil, ok)
			if tc.wantUser != nil {
				require.NotNil(t, resp)
				assert.Equal(t, tc.wantUser, resp.User)
			}
			assert.Equal(t, tc.wantCalls, api.calls())
			for _, spec := range api.asked {
				assert.Equal(t, authenticationv1.TokenReviewSpec{Token: "the-token"}, spec, "the token, and no audiences")
			}
		})
	}
}

// Answers are reused for the TTL, per token; errors never are.
func TestTokenReviewCache(t *testing.T) {
	const ttl = 2 * time.Minute
	for _, tc := range []struct {
		name   string
		answer tokenAPIAnswer
		ttl    time.Duration
		// wantCalls after: the first ask; again at once; again just before ttl; another token;
		// the first token just after ttl.
		wantCalls [5]int
	}{
		{name: "authenticated", answer: tokenAPIAnswer{status: aliceStatus}, ttl: ttl, wantCalls: [5]int{1, 1, 1, 2, 3}},
		{name: "not authenticated", answer: tokenAPIAnswer{}, ttl: ttl, wantCalls: [5]int{1, 1, 1, 2, 3}},
		{name: "an error", answer: tokenAPIAnswer{err: errForbidden}, ttl: ttl, wantCalls: [5]int{1, 2, 3, 4, 5}},
		// The API server's reason for a refusal is an answer, kept as the kubelet's token cache
		// keeps failures: a client sending the same bad token again costs no review.
		{name: "the review's refusal", answer: tokenAPIAnswer{status: authenticationv1.TokenReviewStatus{Error: "expired"}}, ttl: ttl, wantCalls: [5]int{1, 1, 1, 2, 3}},
		{name: "no cache", answer: tokenAPIAnswer{status: aliceStatus}, ttl: 0, wantCalls: [5]int{1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &tokenAPI{answers: []tokenAPIAnswer{tc.answer}}
			clk := clocktesting.NewFakeClock(time.Now())
			authn := tokenAuthenticator(api, tc.ttl, clk)
			ask := func(token string) (*authenticator.Response, bool, error) {
				return authn.AuthenticateToken(context.Background(), token)
			}
			first, firstOK, firstErr := ask("token-1")
			assert.Equal(t, tc.wantCalls[0], api.calls(), "first")
			resp, ok, err := ask("token-1")
			assert.Equal(t, tc.wantCalls[1], api.calls(), "again at once")
			assert.Equal(t, first, resp)
			assert.Equal(t, firstOK, ok)
			assert.Equal(t, firstErr, err)
			clk.Step(ttl - time.Second)
			_, _, _ = ask("token-1")
			assert.Equal(t, tc.wantCalls[2], api.calls(), "again just before the TTL")
			_, _, _ = ask("token-2")
			assert.Equal(t, tc.wantCalls[3], api.calls(), "another token")
			clk.Step(2 * time.Second)
			_, _, _ = ask("token-1")
			assert.Equal(t, tc.wantCalls[4], api.calls(), "after the TTL")
		})
	}
}

// The kubelet's authenticator as newAuthenticator assembles it: a bearer token through
// TokenReview (its user also in system:authenticated), anonymous only without credentials.
func TestNewAuthenticatorTokens(t *testing.T) {
	for _, tc := range []struct {
		name      string
		anonymous bool
		header    string // Authorization
		protocol  string // Sec-WebSocket-Protocol
		answer    tokenAPIAnswer
		wantUser  string // "": not authenticated
		wantErr   bool
	}{
		{name: "a token", header: "Bearer t", answer: tokenAPIAnswer{status: aliceStatus}, wantUser: "alice"},
		{name: "a token in a WebSocket protocol", protocol: "base64url.bearer.authorization.k8s.io.dA, v5.channel.k8s.io", answer: tokenAPIAnswer{status: aliceStatus}, wantUser: "alice"},
		{name: "a token not authenticated", header: "Bearer t", answer: tokenAPIAnswer{}, wantErr: true},
		{name: "a token not authenticated, with anonymous", anonymous: true, header: "Bearer t", answer: tokenAPIAnswer{}, wantErr: true},
		{name: "no credentials", answer: tokenAPIAnswer{status: aliceStatus}},
		{name: "no credentials, with anonymous", anonymous: true, answer: tokenAPIAnswer{status: aliceStatus}, wantUser: user.Anonymous},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &tokenAPI{answers: []tokenAPIAnswer{tc.answer}}
			authn, err := newAuthenticator(Config{TokenReviews: tokenClient(api), Anonymous: tc.anonymous, AuthenticationCacheTTL: time.Minute}, nil)
			require.NoError(t, err)
			r := httptest.NewRequest("GET", "/pods", nil)
			if tc.header != "" {
				r.Header.Set("Authorization", tc.header)
			}
			if tc.protocol != "" {
				r.Header.Set("Connection", "Upgrade")
				r.Header.Set("Upgrade", "websocket")
				r.Header.Set("Sec-WebSocket-Protocol", tc.protocol)
			}
			resp, ok, err := authn.AuthenticateRequest(r)
			assert.Equal(t, tc.wantErr, err != nil, "error: %v", err)
			assert.Equal(t, tc.wantUser != "", ok)
			switch tc.wantUser {
			case "":
			case user.Anonymous:
				assert.Equal(t, &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}, resp.User)
			default:
				assert.Equal(t, tc.wantUser, resp.User.GetName())
				assert.Equal(t, []string{"devs", user.AllAuthenticated}, resp.User.GetGroups())
				assert.Empty(t, r.Header.Get("Authorization"), "the token is not passed on")
			}
		})
	}
}

// Without a client, or with the token webhook off, tokens are not looked at; nothing at all to
// authenticate with is a configuration error.
func TestNewAuthenticatorWithoutTokens(t *testing.T) {
	api := &tokenAPI{answers: []tokenAPIAnswer{{status: aliceStatus}}}
	authn, err := newAuthenticator(Config{TokenReviews: tokenClient(api), DisableTokenWebhook: true, Anonymous: true}, nil)
	require.NoError(t, err)
	r := httptest.NewRequest("GET", "/pods", nil)
	r.Header.Set("Authorization", "Bearer t")
	resp, ok, err := authn.AuthenticateRequest(r)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, user.Anonymous, resp.User.GetName())
	assert.Zero(t, api.calls())

	_, err = newAuthenticator(Config{}, nil)
	assert.Error(t, err)
}

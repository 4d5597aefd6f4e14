package api

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/clock"
)

const (
	// tokenCacheSize bounds the TokenReview answers kept, as k8s.io/apiserver's token cache
	// bounds each of its stripes.
	tokenCacheSize = 4096
	// tokenReviewTimeout bounds one token's review, retries included, as k8s.io/apiserver's
	// token cache bounds its lookups.
	tokenReviewTimeout = 30 * time.Second
)

// tokenReviewAuthenticator authenticates a bearer token by asking the API server with a
// TokenReview (authentication.k8s.io/v1), as the kubelet's delegating authenticator does
// (k8s.io/apiserver's token webhook behind its token cache, whose packages bring in CEL and the
// webhook client machinery): no audiences, as the kubelet sets none; a token the API server does
// not authenticate is no user, one it reports an error for is that error. Every answer — a
// user, nobody, the API server's reason for refusing (tokenRefusal) — is reused for ttl (0:
// never) under the token's SHA-256, so that no token is kept in clear, as the kubelet's token
// cache keeps its failures; errors of the review itself, an outage's, are never reused. Two requests missing the same token at once both ask.
type tokenReviewAuthenticator struct {
	reviews TokenReviewClient
	backoff wait.Backoff
	ttl     time.Duration
	answers *cache.LRUExpireCache // [sha256.Size]byte → tokenAnswer
}

// tokenAnswer is what a TokenReview said of a token: who it is, or that it is nobody (ok false),
// with the API server's reason (err) when it gave one.
type tokenAnswer struct {
	resp *authenticator.Response
	ok   bool
	err  error
}

// tokenRefusal is the API server's own reason for not authenticating a token (its status.error,
// "invalid bearer token"): an answer, cached as a refusal is, where an error of the review itself
// (an outage's) is not.
type tokenRefusal struct{ reason string }

func (e *tokenRefusal) Error() string { return "TokenReview: " + e.reason }

func newTokenReviewAuthenticator(reviews TokenReviewClient, ttl time.Duration, backoff wait.Backoff, clk clock.PassiveClock) *tokenReviewAuthenticator {
	return &tokenReviewAuthenticator{reviews: reviews, backoff: backoff, ttl: ttl,
		answers: cache.NewLRUExpireCacheWithClock(tokenCacheSize, clk)}
}

// AuthenticateToken implements authenticator.Token.
func (a *tokenReviewAuthenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	key := sha256.Sum256([]byte(token))
	if v, ok := a.answers.Get(key); ok {
		answer := v.(tokenAnswer)
		return answer.resp, answer.ok, answer.err
	}
	resp, ok, err := a.review(ctx, token)
	if err != nil && !errors.As(err, new(*tokenRefusal)) {
		return nil, false, err
	}
	if a.ttl > 0 {
		a.answers.Add(key, tokenAnswer{resp: resp, ok: ok, err: err}, a.ttl)
	}
	return resp, ok, err
}

// review asks the API server who token belongs to, retrying what is worth retrying.
func (a *tokenReviewAuthenticator) review(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, tokenReviewTimeout)
	defer cancel()
	var result *authenticationv1.TokenReview
	err := withRetry(ctx, a.backoff, func(ctx context.Context) (err error) {
		result, err = a.reviews.Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token},
		}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("TokenReview: %w", err)
	}
	status := result.Status
	switch {
	case !status.Authenticated && status.Error != "":
		return nil, false, &tokenRefusal{reason: status.Error}
	case !status.Authenticated:
		return nil, false, nil
	}
	var extra map[string][]string
	if status.User.Extra != nil {
		extra = make(map[string][]string, len(status.User.Extra))
		for k, v := range status.User.Extra {
			extra[k] = v
		}
	}
	return &authenticator.Response{User: &user.DefaultInfo{
		Name:   status.User.Username,
		UID:    status.User.UID,
		Groups: status.User.Groups,
		Extra:  extra,
	}}, true, nil
}

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
// not authenticate is no user, one it reports an error for is that error. Both answers are
// reused for ttl (0: never) under the token's SHA-256, so that no token is kept in clear;
// errors, an outage's, are never reused. Two requests missing the same token at once both ask.
type tokenReviewAuthenticator struct {
	reviews TokenReviewClient
	backoff wait.Backoff
	ttl     time.Duration
	answers *cache.LRUExpireCache // [sha256.Size]byte → tokenAnswer
}

// tokenAnswer is what a TokenReview said of a token: who it is, or that it is nobody (ok false).
type tokenAnswer struct {
	resp *authenticator.Response
	ok   bool
}

func newTokenReviewAuthenticator(reviews TokenReviewClient, ttl time.Duration, backoff wait.Backoff, clk clock.PassiveClock) *tokenReviewAuthenticator {
	return &tokenReviewAuthenticator{reviews: reviews, backoff: backoff, ttl: ttl,
		answers: cache.NewLRUExpireCacheWithClock(tokenCacheSize, clk)}
}

// AuthenticateToken implements authenticator.Token.
func (a *tokenReviewAuthenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	key := sha256.Sum256([]byte(token))
	if v, ok := a.answers.Get(key); ok {
		answer := v.(tokenAnswer)
		return answer.resp, answer.ok, nil
	}
	resp, ok, err := a.review(ctx, token)
	if err != nil {
		return nil, false, err
	}
	if a.ttl > 0 {
		a.answers.Add(key, tokenAnswer{resp: resp, ok: ok}, a.ttl)
	}
	return resp, ok, nil
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
		return nil, false, errors.New("TokenReview: " + status.Error)
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

package volume

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/nodeobjects"
)

// maxTokenAge is the kubelet's bound on a token's age before it is replaced, whatever its
// expiration: a long-lived token is still rotated daily.
const maxTokenAge = 24 * time.Hour

// tokenKey names one projected token, as the kubelet's token manager keys its cache: the same
// request for the same pod gets the same token until it is due for a refresh.
type tokenKey struct {
	namespace         string
	serviceAccount    string
	audience          string
	expirationSeconds int64
	podUID            types.UID
}

// cachedToken is a token the API server issued, with the times the refresh rule needs.
type cachedToken struct {
	token   string
	expires time.Time
	ttl     time.Duration
}

// dueForRefresh is the kubelet's rule: a token older than 80% of its TTL, or older than 24h,
// is replaced. (The kubelet adds up to 10s of random jitter to spread its requests; Refresh
// runs once a minute per pod, which spreads them enough, and tests stay deterministic.)
func (t cachedToken) dueForRefresh(now time.Time) bool {
	issued := t.expires.Add(-t.ttl)
	if now.After(issued.Add(maxTokenAge)) {
		return true
	}
	return now.After(t.expires.Add(-t.ttl / 5))
}

// tokenCache holds the tokens of the pods' projected volumes so that Refresh, which runs every
// minute per pod, asks the API server for a new token only when the old one is due. Calls for
// one pod are serialized by the Manager's pod lock, and the key holds the pod's UID, so two
// requests for the same key never race; mu guards only the map.
type tokenCache struct {
	requester nodeobjects.TokenRequester
	clock     clock.Clock

	mu     sync.Mutex
	tokens map[tokenKey]cachedToken
}

func newTokenCache(r nodeobjects.TokenRequester, clk clock.Clock) *tokenCache {
	return &tokenCache{requester: r, clock: clk, tokens: map[tokenKey]cachedToken{}}
}

// token returns the cached token for key, or requests a new one (req) when there is none or
// it is due for a refresh. A failed refresh keeps a token that has not expired yet, with an
// error in the log, as the kubelet does; an expired one is an error.
func (c *tokenCache) token(ctx context.Context, key tokenKey, req *authenticationv1.TokenRequest) (string, error) {
	c.mu.Lock()
	old, cached := c.tokens[key]
	c.mu.Unlock()
	now := c.clock.Now()
	if cached && !old.dueForRefresh(now) {
		return old.token, nil
	}

	fresh, err := c.request(ctx, key, req, now)
	if err != nil {
		switch {
		case !cached:
			return "", err
		case !now.Before(old.expires):
			return "", fmt.Errorf("the token expired at %s and no new one could be had: %w", old.expires.UTC().Format(time.RFC3339), err)
		default:
			klog.FromContext(ctx).Error(err, "Could not refresh a service account token; keeping the current one until it expires",
				"namespace", key.namespace, "serviceAccount", key.serviceAccount, "podUID", key.podUID, "expires", old.expires)
			return old.token, nil
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	// The kubelet collects expired tokens every minute; here each new token does it.
	for k, t := range c.tokens {
		if now.After(t.expires) {
			delete(c.tokens, k)
		}
	}
	c.tokens[key] = fresh
	klog.FromContext(ctx).V(3).Info("Requested a service account token",
		"namespace", key.namespace, "serviceAccount", key.serviceAccount, "podUID", key.podUID, "expires", fresh.expires)
	return fresh.token, nil
}

func (c *tokenCache) request(ctx context.Context, key tokenKey, req *authenticationv1.TokenRequest, now time.Time) (cachedToken, error) {
	tr, err := c.requester.RequestToken(ctx, key.namespace, key.serviceAccount, req)
	if err != nil {
		return cachedToken{}, fmt.Errorf("requesting a token for service account %s/%s: %w", key.namespace, key.serviceAccount, err)
	}
	if tr == nil || tr.Status.Token == "" {
		return cachedToken{}, fmt.Errorf("requesting a token for service account %s/%s: %w", key.namespace, key.serviceAccount, errEmptyToken)
	}
	// The API server may shorten the expiration (--service-account-max-token-expiration) and
	// says so in the answer's spec; its status has the expiry.
	ttl := time.Duration(key.expirationSeconds) * time.Second
	if tr.Spec.ExpirationSeconds != nil && *tr.Spec.ExpirationSeconds > 0 {
		ttl = time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	}
	expires := tr.Status.ExpirationTimestamp.Time
	if expires.IsZero() {
		expires = now.Add(ttl)
	}
	return cachedToken{token: tr.Status.Token, expires: expires, ttl: ttl}, nil
}

// forget drops the tokens of pod uid: the kubelet's DeleteServiceAccountToken when a pod goes.
func (c *tokenCache) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.tokens {
		if k.podUID == uid {
			delete(c.tokens, k)
		}
	}
}

var errEmptyToken = errors.New("the API server returned no token")

package api

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// webhookRetryBackoff is k8s.io/apiserver's DefaultAuthWebhookRetryBackoff, which the kubelet
// uses for both reviews. Copied: its package (pkg/server/options) would bring in the whole
// generic API server, etcd client included. It is the one retry that is not a backoff.Policy:
// its delays grow by half, not double, and its steps count attempts (five), numbers the kubelet
// shares with every API server webhook and that a doubling policy would change.
func webhookRetryBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// withRetry calls review until it succeeds, fails in a way not worth retrying, backoff's steps
// are spent or ctx ends, and returns review's last error (ctx's if it never ran), as
// k8s.io/apiserver's webhook.WithExponentialBackoff does for the kubelet's reviews.
func withRetry(ctx context.Context, backoff wait.Backoff, review func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		last = review(ctx)
		switch {
		case last == nil:
			return true, nil
		case shouldRetryReview(last):
			return false, nil
		}
		return false, last
	})
	if last != nil {
		return last
	}
	return err
}

// shouldRetryReview reports whether a review that failed with err may succeed when asked again:
// what k8s.io/apiserver's webhook.DefaultShouldRetry retries (its package brings in the
// webhook client machinery, egress selector and network proxy included) — a connection reset
// or lost, an internal error (500), a timeout (504), too many requests (429) and any answer
// asking to come back later (Retry-After, as a 503 during an API server's start sends).
func shouldRetryReview(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, retryLater := apierrors.SuggestsClientDelay(err)
	return retryLater
}

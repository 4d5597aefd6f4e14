package localcopy

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Unreachable reports whether err, from a call to the API server, means that the API server
// could not be asked: no answer at all (connection refused or reset, a dial or response
// timeout, a name that does not resolve), or an answer that it cannot answer now (429 Too Many
// Requests, a 5xx: a proxy in front of it, or its storage, down; its own timeouts). Any other
// answer — 404 (gone), 403 (not allowed), 401, 409, ... — is the API server's word, never
// replaced by a copy. A context cancelled by the caller is not an outage either.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

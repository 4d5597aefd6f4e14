package api

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/user"
)

// userKey is the context key under which the guard stores who called. The API server's
// request.WithUser would do the same, but its package links the API server's feature gates and
// through them component-base metrics and OpenTelemetry (cmd/vk-static's TestAgentLinksNoTelemetry).
type userKey struct{}

// withUser returns ctx carrying u, the authenticated caller.
func withUser(ctx context.Context, u user.Info) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the caller the guard authenticated for a request reaching a route (or a
// provider given the request's context), and false outside a request that passed the guard.
func UserFrom(ctx context.Context) (user.Info, bool) {
	u, ok := ctx.Value(userKey{}).(user.Info)
	return u, ok
}

package api

import (
	"fmt"
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"
)

// guard lets a request reach next only once it is authenticated and authorized, answering as
// the kubelet's auth filter does (pkg/kubelet/server/server.go InstallAuthFilter): 401
// "Unauthorized", 403 with the user, verb, resource and subresources, 500 when the authorizer
// fails. Logs carry who and what, never credentials.
type guard struct {
	nodeName string
	authn    authenticator.Request
	authz    authorizer.Authorizer
	next     http.Handler
	logger   klog.Logger
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp, ok, err := g.authn.AuthenticateRequest(r)
	if err != nil {
		g.logger.Error(err, "Unable to authenticate the request due to an error", "path", r.URL.Path, "remoteAddr", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if !ok {
		g.logger.V(4).Info("Unauthenticated request", "path", r.URL.Path, "remoteAddr", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	attrs := requestAttributes(g.nodeName, resp.User, r)
	subresources := make([]string, 0, len(attrs))
	for _, a := range attrs {
		subresources = append(subresources, a.GetSubresource())
		decision, _, err := g.authz.Authorize(r.Context(), a)
		if err != nil {
			g.logger.Error(err, "Authorization error", "user", a.GetUser().GetName(), "verb", a.GetVerb(), "resource", a.GetResource(), "subresource", a.GetSubresource())
			writeError(w, http.StatusInternalServerError, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
				a.GetUser().GetName(), a.GetVerb(), a.GetResource(), a.GetSubresource()))
			return
		}
		if decision == authorizer.DecisionAllow {
			g.next.ServeHTTP(w, r.WithContext(withUser(r.Context(), resp.User)))
			return
		}
	}
	// The attributes differ only by subresource.
	a := attrs[0]
	g.logger.V(2).Info("Forbidden", "user", a.GetUser().GetName(), "verb", a.GetVerb(), "resource", a.GetResource(), "subresources", subresources, "path", r.URL.Path)
	writeError(w, http.StatusForbidden, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)\n",
		a.GetUser().GetName(), a.GetVerb(), a.GetResource(), subresources))
}

// writeError answers with a plain-text message, as the kubelet does.
func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprint(w, msg)
}

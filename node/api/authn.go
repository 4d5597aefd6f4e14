package api

import (
	"errors"
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	authnunion "k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/node/api/clientcert"
)

// newAuthenticator is the kubelet's authenticator (cmd/kubelet/app/auth.go BuildAuthn, which
// k8s.io/apiserver's DelegatingAuthenticatorConfig assembles): client certificates signed by
// clientCA (nil: none), bearer tokens — in the Authorization header or a WebSocket protocol —
// through TokenReview when there are Config.TokenReviews, each user of those also in
// system:authenticated, and, when allowed, anonymous requests: those carrying no credentials,
// not those whose credentials failed. Built here from k8s.io/apiserver's light request packages: its factory
// brings in CEL, the webhook plugins and the egress selector, megabytes of every agent's memory;
// client certificates are package clientcert's (its x509 one links component-base metrics).
func newAuthenticator(c Config, clientCA clientcert.VerifyOptionsFunc) (authenticator.Request, error) {
	var authns []authenticator.Request
	if clientCA != nil {
		authns = append(authns, clientcert.New(clientCA, clientcert.CommonNameUser))
	}
	if c.tokenWebhook() {
		tokens := newTokenReviewAuthenticator(c.TokenReviews, c.AuthenticationCacheTTL, webhookRetryBackoff(), clock.RealClock{})
		authns = append(authns, bearertoken.New(tokens), websocket.NewProtocolAuthenticator(tokens))
	}
	if len(authns) == 0 {
		if c.Anonymous {
			return anonymous{}, nil
		}
		return nil, errors.New("api: no authentication method configured")
	}
	authn := group.NewAuthenticatedGroupAdder(authnunion.New(authns...))
	if c.Anonymous {
		authn = authnunion.NewFailOnError(authn, anonymous{})
	}
	return authn, nil
}

// anonymous authenticates every request as system:anonymous in system:unauthenticated, as
// k8s.io/apiserver's anonymous authenticator without conditions (its package brings in the
// API server's configuration API for them).
type anonymous struct{}

func (anonymous) AuthenticateRequest(*http.Request) (*authenticator.Response, bool, error) {
	return &authenticator.Response{User: &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}}, true, nil
}

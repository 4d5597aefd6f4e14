package localadmin

import (
	"context"
	"crypto/x509"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/vk-static/vk-static/node/api/clientcert"
)

// localAdmin is the user a certificate of the local CA authenticates as. Its type, which only
// this package creates, is what makes it the local administrator: names and groups can be
// claimed by anyone whom another authenticator trusts.
type localAdmin struct{ *user.DefaultInfo }

// IsLocalAdmin reports whether u was authenticated by an Authority's Authenticator.
func IsLocalAdmin(u user.Info) bool {
	_, ok := u.(localAdmin)
	return ok
}

// Authenticator authenticates client certificates the local CA signed for User, and nothing
// else. A request without a certificate is not authenticated; one with another CA's certificate
// fails with an error, which a union of authenticators (k8s.io/apiserver's) reports only when
// no other authenticator accepts the request.
func (a *Authority) Authenticator() authenticator.Request {
	verify := func() (x509.VerifyOptions, bool) { return x509.VerifyOptions{Roots: a.roots}, true }
	return clientcert.New(verify, asLocalAdmin)
}

// asLocalAdmin maps a verified chain to the local administrator, when it names User.
func asLocalAdmin(chain []*x509.Certificate) (*authenticator.Response, bool, error) {
	if chain[0].Subject.CommonName != User {
		return nil, false, nil
	}
	return &authenticator.Response{User: localAdmin{&user.DefaultInfo{
		Name:   User,
		Groups: []string{Group, user.AllAuthenticated},
	}}}, true, nil
}

// Authorizer allows the local administrator everything, and has no opinion on anyone else: put
// it first in a union with the configured authorizer.
func Authorizer() authorizer.Authorizer { return localAdminAuthorizer{} }

type localAdminAuthorizer struct{}

func (localAdminAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser() != nil && IsLocalAdmin(a.GetUser()) {
		return authorizer.DecisionAllow, "the local administrator", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

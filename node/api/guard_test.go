package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"
)

// The guard's answers, with the kubelet's texts, for each thing authentication and
// authorization can say; the integration tests get the same from a real API server.
func TestGuard(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice"}
	authenticated := authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: alice}, true, nil
	})
	// allow allows exactly the given subresources and records what it was asked.
	allow := func(asked *[]string, subresources ...string) authorizer.AuthorizerFunc {
		return func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			*asked = append(*asked, a.GetSubresource())
			for _, s := range subresources {
				if a.GetSubresource() == s {
					return authorizer.DecisionAllow, "", nil
				}
			}
			return authorizer.DecisionNoOpinion, "", nil
		}
	}
	for _, tc := range []struct {
		name        string
		authn       authenticator.Request
		allowed     []string
		authzErr    error
		method      string
		path        string
		wantCode    int
		wantBody    string
		wantAsked   []string
		wantReached bool
	}{{
		name: "no credentials",
		authn: authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
			return nil, false, nil
		}),
		method: "GET", path: "/pods", wantCode: 401, wantBody: "Unauthorized",
	}, {
		name: "credentials that do not work",
		authn: authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
			return nil, false, errors.New("invalid bearer token")
		}),
		method: "GET", path: "/pods", wantCode: 401, wantBody: "Unauthorized",
	}, {
		name: "denied", authn: authenticated,
		method: "POST", path: "/exec/ns/pod/c", wantCode: 403,
		wantBody:  "Forbidden (user=alice, verb=create, resource=nodes, subresource(s)=[proxy])\n",
		wantAsked: []string{"proxy"},
	}, {
		name: "denied every subresource", authn: authenticated,
		method: "GET", path: "/pods", wantCode: 403,
		wantBody:  "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[pods proxy])\n",
		wantAsked: []string{"pods", "proxy"},
	}, {
		name: "the fine-grained subresource is enough", authn: authenticated, allowed: []string{"pods"},
		method: "GET", path: "/pods", wantCode: 200, wantAsked: []string{"pods"}, wantReached: true,
	}, {
		name: "proxy covers it too", authn: authenticated, allowed: []string{"proxy"},
		method: "GET", path: "/pods", wantCode: 200, wantAsked: []string{"pods", "proxy"}, wantReached: true,
	}, {
		name: "authorizer failure", authn: authenticated, authzErr: errors.New("SubjectAccessReview: connection refused"),
		method: "GET", path: "/stats/summary", wantCode: 500,
		wantBody:  "Authorization error (user=alice, verb=get, resource=nodes, subresource=stats)",
		wantAsked: []string{"stats"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			authz := allow(&asked, tc.allowed...)
			if tc.authzErr != nil {
				authz = func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
					asked = append(asked, a.GetSubresource())
					return authorizer.DecisionNoOpinion, "", tc.authzErr
				}
			}
			reached := false
			g := &guard{nodeName: "node-a", authn: tc.authn, authz: authz, logger: klog.Background(),
				next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			assert.Equal(t, tc.wantCode, w.Code)
			if tc.wantBody != "" {
				assert.Equal(t, tc.wantBody, w.Body.String())
				assert.Equal(t, "text/plain; charset=utf-8", w.Header().Get("Content-Type"))
			}
			assert.Equal(t, tc.wantAsked, asked)
			assert.Equal(t, tc.wantReached, reached)
		})
	}
}

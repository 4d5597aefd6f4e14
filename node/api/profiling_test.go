package api

import (
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// /debug/pprof is behind authentication and authorization like every route, authorized as the
// kubelet authorizes it (get on nodes/proxy): no credentials is 401, a user the API server does
// not allow that is 403, one it allows gets the profiles — /debug/pprof/cmdline, the agent's
// command line, among them. Without Profiling nothing is served there.
func TestProfiling(t *testing.T) {
	ca := newTestCA(t)
	// The API server, as far as SubjectAccessReviews go: bob may get nodes/proxy of node-a,
	// nobody else anything.
	var mu sync.Mutex
	var asked []authorizationv1.ResourceAttributes
	apiServer := fake.NewClientset()
	apiServer.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		sar := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		ra := sar.Spec.ResourceAttributes
		if ra == nil {
			return true, nil, errors.New("not a resource request")
		}
		mu.Lock()
		asked = append(asked, *ra)
		mu.Unlock()
		sar.Status.Allowed = sar.Spec.User == "bob" &&
			*ra == authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "proxy", Name: "node-a"}
		return true, sar, nil
	})
	cfg := Config{ClientCAFile: ca.file, SubjectAccessReviews: apiServer.AuthorizationV1().SubjectAccessReviews(), DisableTokenWebhook: true}
	withProfiling := cfg
	withProfiling.Profiling = true
	s := serve(t, withProfiling)
	anonymous := client(t)
	alice := client(t, ca.issue(t, "alice", x509.ExtKeyUsageClientAuth))
	bob := client(t, ca.issue(t, "bob", x509.ExtKeyUsageClientAuth))

	for _, path := range []string{"/debug/pprof/cmdline", "/debug/pprof/", "/debug/pprof/heap"} {
		code, body, _ := get(t, anonymous, s, path)
		assert.Equal(t, http.StatusUnauthorized, code, "%s: %s", path, body)
		assert.Equal(t, "Unauthorized", body, path)

		code, body, _ = get(t, alice, s, path)
		assert.Equal(t, http.StatusForbidden, code, "%s: %s", path, body)
		assert.Equal(t, "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[proxy])\n", body, path)
	}

	code, body, _ := get(t, bob, s, "/debug/pprof/cmdline")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, strings.Join(os.Args, "\x00"), body)
	code, body, _ = get(t, bob, s, "/debug/pprof/")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "goroutine")
	code, body, _ = get(t, bob, s, "/debug/pprof/goroutine?debug=1")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "goroutine profile:")

	mu.Lock()
	for _, ra := range asked {
		assert.Equal(t, authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "proxy", Name: "node-a"}, ra)
	}
	mu.Unlock()

	without := serve(t, cfg)
	code, _, _ = get(t, bob, without, "/debug/pprof/cmdline")
	assert.Equal(t, http.StatusNotFound, code, "no Profiling, no /debug/pprof")
	code, _, _ = get(t, anonymous, without, "/debug/pprof/cmdline")
	assert.Equal(t, http.StatusUnauthorized, code, "unauthenticated, a missing route is not told apart")
}

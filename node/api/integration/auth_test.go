package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/node/api"
)

const itWait = 10 * time.Second

// whoAmI answers with the user the server let through.
var whoAmI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	u, _ := api.UserFrom(r.Context())
	fmt.Fprint(w, u.GetName())
})

// serve runs the kubelet API of node (whose token identity, system:node:<node>, is all it uses
// to ask the API server), trusting the cluster CA for client certificates, with /whoami and
// /pods, and what configure adds to its Config; it stops when the test ends, leaving nothing
// running.
func serve(t *testing.T, node string, configure ...func(*api.Config)) *api.Server {
	t.Helper()
	cfg, cs, verifyNoLeaks := env.LeakCheckedNodeClient(t, node, itWait)
	require.NotEmpty(t, cfg.BearerToken, "a token identity, so that the node's own rights are tested")
	c := api.Config{
		NodeName: node, Address: "127.0.0.1",
		TokenReviews: cs.AuthenticationV1().TokenReviews(), SubjectAccessReviews: cs.AuthorizationV1().SubjectAccessReviews(),
		CertDirectory: t.TempDir(), ClientCAFile: env.CAFile,
	}
	for _, f := range configure {
		f(&c)
	}
	s, err := api.New(c)
	require.NoError(t, err)
	s.Handle("/whoami", whoAmI)
	s.Handle("/pods", whoAmI)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(itWait):
			t.Fatal("Run did not return")
		}
		verifyNoLeaks()
	})
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(itWait):
		t.Fatal("not ready")
	}
	return s
}

// caller makes requests to a server as one identity: a bearer token, a client certificate, or
// nothing.
type caller struct {
	token  string
	client *http.Client
}

func newCaller(t *testing.T, token string, certs ...tls.Certificate) *caller {
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // the server's certificate is self-signed; what is tested is the server's trust in the caller
		Certificates:       certs,
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &caller{token: token, client: &http.Client{Transport: tr, Timeout: itWait}}
}

func (c *caller) do(t *testing.T, s *api.Server, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "https://"+s.Addr()+path, nil)
	require.NoError(t, err)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// serviceAccountToken creates a service account in ns and returns a token for it
// (system:serviceaccount:<ns>:<name>), which the server can only learn about through TokenReview.
func serviceAccountToken(t *testing.T, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := env.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	tr, err := env.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

// grant gives subject verbs on nodes/<subresource> (any node) through a ClusterRole and binding,
// and waits until the API server's RBAC says so: a SubjectAccessReview asked too early would be
// denied, and the server would remember that answer for 30 s.
func grant(t *testing.T, subject rbacv1.Subject, subresource string, verbs ...string) {
	t.Helper()
	ctx := context.Background()
	name := "vk-static-test-" + strings.ToLower(strings.NewReplacer(":", "-", "/", "-").Replace(subject.Name)) + "-" + subresource
	_, err := env.Admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes/" + subresource}, Verbs: verbs}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = env.Admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{subject},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = env.Admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.Admin.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	user := subject.Name
	if subject.Kind == rbacv1.ServiceAccountKind {
		user = "system:serviceaccount:" + subject.Namespace + ":" + subject.Name
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		sar, err := env.Admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verbs[0], Resource: "nodes", Subresource: subresource, Name: "any"},
		}}, metav1.CreateOptions{})
		require.NoError(c, err)
		assert.True(c, sar.Status.Allowed, "RBAC has not seen the binding yet")
	}, itWait, 20*time.Millisecond)
}

func serviceAccount(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

// Bearer tokens: the server learns who a token is through a TokenReview and what they may do
// through SubjectAccessReviews, both made with the node's identity; RBAC's answer is the
// server's.
func TestBearerTokens(t *testing.T) {
	ns := env.Namespace(t)
	s := serve(t, "node-a")

	code, body := newCaller(t, "").do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code, "no credentials")
	assert.Equal(t, "Unauthorized", body)

	code, _ = newCaller(t, "not-a-token").do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code, "a token the API server does not know")

	nobody := newCaller(t, serviceAccountToken(t, ns, "nobody"))
	code, body = nobody.do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusForbidden, code, "a user without nodes/proxy")
	assert.Equal(t, fmt.Sprintf("Forbidden (user=system:serviceaccount:%s:nobody, verb=get, resource=nodes, subresource(s)=[proxy])\n", ns), body)

	grant(t, serviceAccount(ns, "proxier"), "proxy", "get")
	proxier := newCaller(t, serviceAccountToken(t, ns, "proxier"))
	code, body = proxier.do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "system:serviceaccount:"+ns+":proxier", body, "the route sees the user")
	code, body = proxier.do(t, s, "POST", "/whoami")
	assert.Equal(t, http.StatusForbidden, code, "get does not give create")
	assert.Contains(t, body, "verb=create")
	code, _ = proxier.do(t, s, "GET", "/nothing-here")
	assert.Equal(t, http.StatusNotFound, code, "authorized, then not found")

	// nodes/pods alone (the kubelet's fine-grained authorization) opens /pods and nothing else.
	grant(t, serviceAccount(ns, "podreader"), "pods", "get")
	podReader := newCaller(t, serviceAccountToken(t, ns, "podreader"))
	code, body = podReader.do(t, s, "GET", "/pods")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = podReader.do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "subresource(s)=[proxy]")
}

// Client certificates signed by the client CA are their subject's user; authorization still
// asks the API server.
func TestClientCertificates(t *testing.T) {
	s := serve(t, "node-b")
	cert := func(user string) tls.Certificate {
		certPEM, keyPEM, err := env.IssueClientCert(user, "vk-static-testers")
		require.NoError(t, err)
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		return c
	}
	grant(t, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}, "proxy", "get")
	code, body := newCaller(t, "", cert("alice")).do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "alice", body)

	code, body = newCaller(t, "", cert("mallory")).do(t, s, "GET", "/whoami")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "Forbidden (user=mallory, verb=get, resource=nodes, subresource(s)=[proxy])\n", body)
}

package api

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vk-static/vk-static/node/api/localadmin"
)

// localAdminClient is an HTTPS client with the credential the server wrote, verifying the
// server as the CLI does.
func localAdminClient(t *testing.T, dir string) (*http.Client, *localadmin.Credential) {
	t.Helper()
	cred, err := localadmin.ReadCredential(dir)
	require.NoError(t, err)
	tr := &http.Transport{TLSClientConfig: cred.TLSConfig()}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, cred
}

// Standalone with nothing but the local administrator (how `make run` serves): the server
// writes a kubeconfig, 0600 in a 0700 directory, for its address; its certificate is the local
// administrator, allowed everything although the mode is Webhook with no API server to ask;
// nobody else gets in, not even with a certificate of another CA naming the same user and group.
func TestLocalAdminStandalone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	s := serve(t, Config{LocalAdmin: true, CertDirectory: dir})

	info, err := os.Stat(filepath.Join(dir, localadmin.KubeconfigFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	info, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	admin, cred := localAdminClient(t, dir)
	assert.Equal(t, "https://"+s.Addr(), cred.Server)
	assert.Equal(t, filepath.Join(dir, selfSignedCertName), cred.ServerCertFile)
	resp, err := admin.Get(cred.Server + "/whoami")
	require.NoError(t, err)
	body := readAll(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "vk-static:local-admin [vk-static:local-admins system:authenticated]", body)

	code, _, _ := get(t, client(t), s, "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code, "no certificate")
	impostor := newTestCA(t).issue(t, localadmin.User, x509.ExtKeyUsageClientAuth, localadmin.Group)
	code, _, _ = get(t, client(t, impostor), s, "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code, "the local admin's name from another CA")
}

// With a client CA as well and Webhook without an API server, the client CA's users are
// authenticated but allowed nothing — a certificate naming the local administrator's user and
// group included; the local administrator is allowed.
func TestLocalAdminBesideAClientCA(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	s := serve(t, Config{LocalAdmin: true, CertDirectory: dir, ClientCAFile: ca.file})

	code, body, _ := get(t, client(t, ca.issue(t, "alice", x509.ExtKeyUsageClientAuth)), s, "/whoami")
	assert.Equal(t, http.StatusForbidden, code, body)
	code, body, _ = get(t, client(t, ca.issue(t, localadmin.User, x509.ExtKeyUsageClientAuth, localadmin.Group)), s, "/whoami")
	assert.Equal(t, http.StatusForbidden, code, "named like the local admin, signed by the client CA: %s", body)

	admin, cred := localAdminClient(t, dir)
	resp, err := admin.Get(cred.Server + "/whoami")
	require.NoError(t, err)
	body = readAll(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
}

// With an API server (Webhook), the local administrator is allowed without a
// SubjectAccessReview — the API server does not know that user — and everyone else is asked
// about.
func TestLocalAdminWithWebhook(t *testing.T) {
	ca := newTestCA(t)
	// The API server, as far as SubjectAccessReviews go: alice is allowed, nobody else.
	var mu sync.Mutex
	var asked []string
	apiServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sar authorizationv1.SubjectAccessReview
		if r.URL.Path != "/apis/authorization.k8s.io/v1/subjectaccessreviews" || json.NewDecoder(r.Body).Decode(&sar) != nil {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked = append(asked, sar.Spec.User)
		mu.Unlock()
		sar.Status.Allowed = sar.Spec.User == "alice"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&sar)
	}))
	// JSON: the typed client would send protobuf, which this fake API server does not read.
	clientset, err := kubernetes.NewForConfig(&rest.Config{Host: apiServer.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	require.NoError(t, err)
	dir := t.TempDir()
	s := serve(t, Config{LocalAdmin: true, CertDirectory: dir, ClientCAFile: ca.file, SubjectAccessReviews: clientset.AuthorizationV1().SubjectAccessReviews(), DisableTokenWebhook: true})
	t.Cleanup(apiServer.Close) // before serve's leak check: its connections are the client's

	admin, cred := localAdminClient(t, dir)
	resp, err := admin.Get(cred.Server + "/whoami")
	require.NoError(t, err)
	body := readAll(t, resp)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)

	code, body, _ := get(t, client(t, ca.issue(t, "alice", x509.ExtKeyUsageClientAuth)), s, "/whoami")
	assert.Equal(t, http.StatusOK, code, body)
	code, _, _ = get(t, client(t, ca.issue(t, "bob", x509.ExtKeyUsageClientAuth)), s, "/whoami")
	assert.Equal(t, http.StatusForbidden, code)
	mu.Lock()
	defer mu.Unlock()
	assert.NotContains(t, asked, localadmin.User)
	assert.Contains(t, asked, "alice")
}

// Webhook without an API server is refused unless the local administrator is the one it allows.
func TestWebhookWithoutClientNeedsLocalAdmin(t *testing.T) {
	_, err := New(Config{NodeName: "n", CertDirectory: t.TempDir(), Anonymous: true})
	require.ErrorContains(t, err, "Webhook needs Config.SubjectAccessReviews")
	_, err = New(Config{NodeName: "n", LocalAdmin: true, TLSCertFile: "x", TLSPrivateKeyFile: "y"})
	require.ErrorContains(t, err, "CertDirectory is required with Config.LocalAdmin")
}

func TestLocalURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:10250": "https://127.0.0.1:10250",
		"0.0.0.0:10250":   "https://127.0.0.1:10250",
		"[::]:10250":      "https://[::1]:10250",
		"10.0.0.5:1":      "https://10.0.0.5:1",
	} {
		assert.Equal(t, want, localURL(addr), addr)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

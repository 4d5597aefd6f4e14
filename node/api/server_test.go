package api

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	certutil "k8s.io/client-go/util/cert"

	"github.com/vk-static/vk-static/internal/selfsigned"
)

// testCA signs client certificates, as a cluster CA would.
type testCA struct {
	*selfsigned.CA
	file string // PEM, for Config.ClientCAFile
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	ca, err := selfsigned.NewCA("test-ca", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(file, ca.CertPEM, 0o600))
	return &testCA{CA: ca, file: file}
}

// issue is a certificate for user in groups with usage (client or server authentication).
func (ca *testCA) issue(t *testing.T, user string, usage x509.ExtKeyUsage, groups ...string) tls.Certificate {
	t.Helper()
	certPEM, keyPEM, err := ca.Issue(selfsigned.Leaf{
		Subject: pkix.Name{CommonName: user, Organization: groups}, Hosts: []string{user}, Usage: usage,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
	})
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	return pair
}

// whoAmI answers with the user the guard let through.
var whoAmI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	u, ok := UserFrom(r.Context())
	if !ok {
		http.Error(w, "no user", http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%s %v", u.GetName(), u.GetGroups())
})

// serve runs a server for cfg (on 127.0.0.1, a free port, a fresh certificate directory unless
// set) with /whoami, and stops it when the test ends, checking that nothing it started is left.
func serve(t *testing.T, cfg Config) *Server {
	t.Helper()
	baseline := goleak.IgnoreCurrent()
	cfg.NodeName, cfg.Address = "node-a", "127.0.0.1"
	if cfg.TLSCertFile == "" && cfg.CertDirectory == "" {
		cfg.CertDirectory = t.TempDir()
	}
	s, err := New(cfg)
	require.NoError(t, err)
	s.Handle("/whoami", whoAmI)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
		}
		// A handler's goroutines end just after its connection closes; verifyNoLeaks waits.
		verifyNoLeaks(t, baseline)
	})
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	return s
}

// client is an HTTPS client presenting certs, trusting nothing (the tests look at the served
// certificate themselves); its connections close when the test ends, before the leak check.
func client(t *testing.T, certs ...tls.Certificate) *http.Client {
	t.Helper()
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true, Certificates: certs}, //nolint:gosec // the served certificate is checked apart
		ForceAttemptHTTP2: true,                                                       // offered; the server must not take it
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, s *Server, path string) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Get("https://" + s.Addr() + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp
}

// Standalone with a client CA: a certificate the CA signed is the user (CN) in its groups (O);
// no certificate, or one from another CA, is 401; a path nothing serves is 404, but only once
// authenticated.
func TestClientCertificates(t *testing.T) {
	ca := newTestCA(t)
	s := serve(t, Config{ClientCAFile: ca.file, AuthorizationMode: AuthorizationModeAlwaysAllow})

	code, body, _ := get(t, client(t), s, "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "Unauthorized", body)

	code, body, _ = get(t, client(t), s, "/nothing-here")
	assert.Equal(t, http.StatusUnauthorized, code, "unauthenticated, a missing route is not told apart")

	alice := client(t, ca.issue(t, "alice", x509.ExtKeyUsageClientAuth, "dev"))
	code, body, resp := get(t, alice, s, "/whoami")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "alice [dev system:authenticated]", body)
	assert.Equal(t, "HTTP/1.1", resp.Proto, "no HTTP/2: upgrades need HTTP/1.1")

	code, _, _ = get(t, alice, s, "/nothing-here")
	assert.Equal(t, http.StatusNotFound, code)

	other := newTestCA(t)
	code, _, _ = get(t, client(t, other.issue(t, "alice", x509.ExtKeyUsageClientAuth)), s, "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code, "a certificate from another CA")

	code, _, _ = get(t, client(t, ca.issue(t, "alice", x509.ExtKeyUsageServerAuth)), s, "/whoami")
	assert.Equal(t, http.StatusUnauthorized, code, "a certificate not for client authentication")
}

// Without files, the server presents the self-signed certificate it keeps in CertDirectory,
// valid for the node name and the listen address.
func TestSelfSignedCertificateIsServed(t *testing.T) {
	dir := t.TempDir()
	s := serve(t, Config{CertDirectory: dir, Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow})
	roots, err := certutil.NewPool(filepath.Join(dir, "kubelet.crt"))
	require.NoError(t, err)
	for _, name := range []string{"node-a", "127.0.0.1"} {
		conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{RootCAs: roots, ServerName: name})
		require.NoError(t, err, name)
		require.NoError(t, conn.Close())
	}
}

// Anonymous requests are system:anonymous, and need authorizing like any other.
func TestAnonymous(t *testing.T) {
	s := serve(t, Config{Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow})
	code, body, _ := get(t, client(t), s, "/whoami")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "system:anonymous [system:unauthenticated]", body)
}

func TestTLSMinVersion(t *testing.T) {
	s := serve(t, Config{Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow, TLSMinVersion: "VersionTLS13"})
	_, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}) //nolint:gosec // only the version matters
	require.Error(t, err, "TLS 1.2 refused")
	conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only the version matters
	require.NoError(t, err)
	assert.Equal(t, uint16(tls.VersionTLS13), conn.ConnectionState().Version)
	require.NoError(t, conn.Close())
}

// A serving certificate replaced on disk is served to new connections without a restart, as
// the kubelet reloads its --tls-cert-file.
func TestServingCertificateReload(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(name string) {
		c := ca.issue(t, name, x509.ExtKeyUsageServerAuth)
		key, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
		require.NoError(t, err)
		// The key first, then the certificate: the reloader reads both once the certificate moves.
		require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600))
		require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600))
	}
	write("first")
	srv := serve(t, Config{TLSCertFile: certFile, TLSPrivateKeyFile: keyFile, Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow})
	served := func() string { return servedName(srv.Addr()) }
	assert.Equal(t, "first", served())
	write("second")
	assert.Eventually(t, func() bool { return served() == "second" }, 10*time.Second, 50*time.Millisecond)
}

// Run fails, and leaves nothing running, when it cannot listen.
func TestRunFailsWhenThePortIsTaken(t *testing.T) {
	baseline := goleak.IgnoreCurrent()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	srv, err := New(Config{NodeName: "node-a", Address: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port,
		CertDirectory: t.TempDir(), Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow})
	require.NoError(t, err)
	err = srv.Run(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "address already in use")
	select {
	case <-srv.Ready():
		t.Error("ready without a listener")
	default:
	}
	verifyNoLeaks(t, baseline)
}

// servedName is the common name of the certificate served at addr, or the error dialling it.
func servedName(addr string) string {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the name is what is looked at
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

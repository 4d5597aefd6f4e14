package api

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/node/api/localadmin"
)

// writeAtomically replaces path with data by a rename, as tools that rotate certificates do.
func writeAtomically(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// writePair writes a serving certificate for name, signed by ca, to certFile and keyFile.
func writePair(t *testing.T, ca *testCA, name, certFile, keyFile string) {
	t.Helper()
	c := ca.issue(t, name, x509.ExtKeyUsageServerAuth)
	key, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	require.NoError(t, err)
	writeAtomically(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}))
	writeAtomically(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}))
}

// advertisedCAs are the common names of the CAs the server asks a client certificate of.
func advertisedCAs(t *testing.T, s *Server) []string {
	t.Helper()
	var names []string
	conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // the request for a certificate is what is looked at
		GetClientCertificate: func(req *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			for _, der := range req.AcceptableCAs {
				var rdns pkix.RDNSequence
				_, err := asn1.Unmarshal(der, &rdns)
				require.NoError(t, err)
				var name pkix.Name
				name.FillFromRDNSequence(&rdns)
				names = append(names, name.CommonName)
			}
			return &tls.Certificate{}, nil
		},
	})
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	return names
}

// A client CA added to --client-ca-file is trusted, and one taken out of it no longer is, without
// a restart, for authentication and in the CAs the handshake advertises; the local
// administrator's CA is advertised beside it throughout.
func TestClientCAReload(t *testing.T) {
	first, second := newTestCA(t), newTestCA(t)
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	writeAtomically(t, caFile, first.CertPEM)
	s := serve(t, Config{ClientCAFile: caFile, LocalAdmin: true, CertDirectory: filepath.Join(dir, "pki"), AuthorizationMode: AuthorizationModeAlwaysAllow})
	status := func(ca *testCA, user string) int {
		code, _, _ := get(t, client(t, ca.issue(t, user, x509.ExtKeyUsageClientAuth)), s, "/whoami")
		return code
	}
	localCA := localCAName(t, filepath.Join(dir, "pki"))

	assert.Equal(t, http.StatusOK, status(first, "alice"))
	assert.Equal(t, http.StatusUnauthorized, status(second, "bob"), "not trusted yet")
	assert.ElementsMatch(t, []string{first.Cert.Subject.CommonName, localCA}, advertisedCAs(t, s))

	writeAtomically(t, caFile, bytes.Join([][]byte{first.CertPEM, second.CertPEM}, nil))
	assert.Eventually(t, func() bool { return status(second, "bob") == http.StatusOK }, 10*time.Second, 50*time.Millisecond, "a CA added")
	assert.Equal(t, http.StatusOK, status(first, "alice"))
	assert.ElementsMatch(t, []string{first.Cert.Subject.CommonName, second.Cert.Subject.CommonName, localCA}, advertisedCAs(t, s))

	// In place this time, as an editor writes.
	require.NoError(t, os.WriteFile(caFile, second.CertPEM, 0o600))
	assert.Eventually(t, func() bool { return status(first, "alice") == http.StatusUnauthorized }, 10*time.Second, 50*time.Millisecond, "a CA removed")
	assert.Equal(t, http.StatusOK, status(second, "bob"))
	assert.ElementsMatch(t, []string{second.Cert.Subject.CommonName, localCA}, advertisedCAs(t, s))

	admin, cred := localAdminClient(t, filepath.Join(dir, "pki"))
	resp, err := admin.Get(cred.Server + "/whoami")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, readAll(t, resp))
}

// localCAName is the common name of the local administrator's CA in dir.
func localCAName(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, localadmin.CACertFile))
	require.NoError(t, err)
	block, _ := pem.Decode(b)
	require.NotNil(t, block)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert.Subject.CommonName
}

// A serving certificate replaced by a rename is served; one that does not load (a key that is
// not its certificate's, an empty file) keeps the last good one served, until the files are
// right again.
func TestServingCertificateReloadKeepsTheLastGoodPair(t *testing.T) {
	ca, clientCA := newTestCA(t), newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	writePair(t, ca, "first", certFile, keyFile)
	writeAtomically(t, caFile, ca.CertPEM)
	s := serve(t, Config{TLSCertFile: certFile, TLSPrivateKeyFile: keyFile, ClientCAFile: caFile, AuthorizationMode: AuthorizationModeAlwaysAllow})
	served := func() string { return servedName(s.Addr()) }
	require.Equal(t, "first", served())

	writePair(t, ca, "second", certFile, keyFile)
	assert.Eventually(t, func() bool { return served() == "second" }, 10*time.Second, 50*time.Millisecond, "replaced by a rename")

	otherKey := filepath.Join(dir, "other.key")
	writePair(t, ca, "third", filepath.Join(dir, "other.crt"), otherKey)
	key, err := os.ReadFile(otherKey)
	require.NoError(t, err)
	writeAtomically(t, keyFile, key) // not second's key
	writeAtomically(t, certFile, nil)
	// A client CA changed after them tells when they have been read: each load reads both.
	writeAtomically(t, caFile, clientCA.CertPEM)
	assert.Eventually(t, func() bool {
		code, _, _ := get(t, client(t, clientCA.issue(t, "alice", x509.ExtKeyUsageClientAuth)), s, "/whoami")
		return code == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond, "the client CA changed")
	assert.Equal(t, "second", served(), "the last good pair")
	writePair(t, ca, "fourth", certFile, keyFile)
	assert.Eventually(t, func() bool { return served() == "fourth" }, 10*time.Second, 50*time.Millisecond)
}

// A load in which one of the serving pair and the client CA fails still takes the other's
// change, and returns the failure.
func TestCertificatesLoadEachOnItsOwn(t *testing.T) {
	first, second := newTestCA(t), newTestCA(t)
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	writePair(t, first, "server", certFile, keyFile)
	writeAtomically(t, caFile, first.CertPEM)
	c, err := tlsSettings{certFile: certFile, keyFile: keyFile, clientCAFile: caFile}.newCertificates(klog.Background())
	require.NoError(t, err)
	verifies := func(ca *testCA) bool {
		opts, ok := c.clientCAVerifyOptions()()
		require.True(t, ok)
		cert := ca.issue(t, "alice", x509.ExtKeyUsageClientAuth)
		opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		_, err := cert.Leaf.Verify(opts)
		return err == nil
	}
	require.True(t, verifies(first))

	writeAtomically(t, certFile, []byte("not a certificate"))
	writeAtomically(t, caFile, second.CertPEM)
	require.Error(t, c.load(klog.Background(), true))
	assert.True(t, verifies(second), "the new client CA")
	assert.False(t, verifies(first))
	cfg := c.config.Load()
	assert.Equal(t, "server", cfg.Certificates[0].Leaf.Subject.CommonName, "the last good serving pair")

	writePair(t, second, "server-2", certFile, keyFile)
	writeAtomically(t, caFile, nil)
	require.Error(t, c.load(klog.Background(), true))
	assert.Equal(t, "server-2", c.config.Load().Certificates[0].Leaf.Subject.CommonName, "the new serving pair")
	assert.True(t, verifies(second), "the last good client CA")

	before := c.config.Load()
	require.Error(t, c.load(klog.Background(), true), "still failing")
	assert.Same(t, before, c.config.Load(), "nothing changed, nothing stored")
}

package localadmin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	certutil "k8s.io/client-go/util/cert"
)

var now = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

func TestEnsureAuthorityCreatesReusesAndRenews(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	a, err := EnsureAuthority(dir, now)
	require.NoError(t, err)
	assert.False(t, a.Reused())
	for _, name := range []string{CACertFile, CAKeyFile} {
		info, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), name)
	}
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	b, err := EnsureAuthority(dir, now.Add(24*time.Hour))
	require.NoError(t, err)
	assert.True(t, b.Reused(), "a restart keeps the CA")
	assert.Equal(t, a.CABundle(), b.CABundle())

	c, err := EnsureAuthority(dir, now.Add(caValidity-RenewBefore/2))
	require.NoError(t, err)
	assert.False(t, c.Reused(), "a CA about to expire is replaced")
	assert.NotEqual(t, a.CABundle(), c.CABundle())

	require.NoError(t, os.WriteFile(filepath.Join(dir, CAKeyFile), []byte("garbage"), 0o600))
	d, err := EnsureAuthority(dir, now)
	require.NoError(t, err)
	assert.False(t, d.Reused(), "a broken pair is replaced")
}

// The kubeconfig's certificate authenticates as the local administrator, and only through its
// own CA; the authorizer allows that user value alone, not a look-alike.
func TestIdentity(t *testing.T) {
	dir := t.TempDir()
	a, err := EnsureAuthority(dir, time.Now())
	require.NoError(t, err)
	serverCert := filepath.Join(dir, "server.crt")
	require.NoError(t, os.WriteFile(serverCert, a.CABundle(), 0o600)) // any certificate will do here
	path, err := a.WriteKubeconfig("https://127.0.0.1:1", serverCert, "node-a", time.Now())
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	cred, err := ReadCredential(dir)
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:1", cred.Server)
	assert.Equal(t, serverCert, cred.ServerCertFile)
	assert.Equal(t, "node-a", cred.ServerName)

	leaf, err := x509.ParseCertificate(cred.clientCert.Certificate[0])
	require.NoError(t, err)
	r := &http.Request{TLS: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}}
	resp, ok, err := a.Authenticator().AuthenticateRequest(r)
	require.NoError(t, err)
	require.True(t, ok)
	assert.True(t, IsLocalAdmin(resp.User))
	assert.Equal(t, User, resp.User.GetName())
	assert.Equal(t, []string{Group, user.AllAuthenticated}, resp.User.GetGroups())

	other, err := EnsureAuthority(t.TempDir(), time.Now())
	require.NoError(t, err)
	_, ok, err = other.Authenticator().AuthenticateRequest(r)
	assert.False(t, ok)
	assert.Error(t, err, "signed by another CA")
	_, ok, err = a.Authenticator().AuthenticateRequest(&http.Request{})
	assert.False(t, ok, "no certificate")
	assert.NoError(t, err)

	decide := func(u user.Info) authorizer.Decision {
		d, _, err := Authorizer().Authorize(context.Background(), authorizer.AttributesRecord{User: u, Verb: "get", Resource: "nodes"})
		require.NoError(t, err)
		return d
	}
	assert.Equal(t, authorizer.DecisionAllow, decide(resp.User))
	assert.Equal(t, authorizer.DecisionNoOpinion, decide(&user.DefaultInfo{Name: User, Groups: []string{Group}}), "a look-alike")
}

func TestReadCredentialErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadCredential(dir)
	require.ErrorIs(t, err, ErrNoCredential)
	assert.ErrorContains(t, err, filepath.Join(dir, KubeconfigFile))

	require.NoError(t, os.WriteFile(filepath.Join(dir, KubeconfigFile), []byte("apiVersion: v1\nkind: Config\n"), 0o600))
	_, err = ReadCredential(dir)
	assert.ErrorContains(t, err, "no current context")
}

// The server is trusted when it serves the certificate in the file (whatever its names), or one
// chaining to a certificate there for ServerName; not otherwise.
func TestVerifyServer(t *testing.T) {
	dir := t.TempDir()
	certPEM, _, err := certutil.GenerateSelfSignedCertKey("node-a", nil, nil) // leaf, then its CA
	require.NoError(t, err)
	certs, err := certutil.ParseCertsPEM(certPEM)
	require.NoError(t, err)
	require.Len(t, certs, 2)
	otherPEM, _, err := certutil.GenerateSelfSignedCertKey("node-a", nil, nil)
	require.NoError(t, err)
	others, err := certutil.ParseCertsPEM(otherPEM)
	require.NoError(t, err)

	pinned := filepath.Join(dir, "pinned.crt")
	require.NoError(t, os.WriteFile(pinned, certPEM, 0o600))
	caOnly := filepath.Join(dir, "ca.crt")
	caPEM, err := certutil.EncodeCertificates(certs[1])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(caOnly, caPEM, 0o600))

	for _, tc := range []struct {
		name, file, serverName string
		served                 []*x509.Certificate
		ok                     bool
	}{
		{name: "the certificate in the file", file: pinned, served: certs, ok: true},
		{name: "chains to the file, for the name", file: caOnly, serverName: "node-a", served: certs[:1], ok: true},
		{name: "chains to the file, another name", file: caOnly, serverName: "node-b", served: certs[:1]},
		{name: "another certificate", file: pinned, serverName: "node-a", served: others},
		{name: "no certificate", file: pinned},
		{name: "no file", file: filepath.Join(dir, "missing"), served: certs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Credential{ServerCertFile: tc.file, ServerName: tc.serverName}
			err := c.TLSConfig().VerifyConnection(tls.ConnectionState{PeerCertificates: tc.served})
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

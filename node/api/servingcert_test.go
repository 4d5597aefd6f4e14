package api

import (
	"crypto/tls"
	"crypto/x509"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With Config.ServingCertificate (a certificate manager's Current), the server presents the
// self-signed certificate while the getter has none, and the getter's certificate from the next
// handshake on, with no restart; the client CA keeps working either way.
func TestServingCertificateFromGetter(t *testing.T) {
	ca := newTestCA(t)
	var current atomic.Pointer[tls.Certificate]
	s := serve(t, Config{
		ClientCAFile: ca.file, AuthorizationMode: AuthorizationModeAlwaysAllow,
		ServingCertificate: current.Load,
	})
	served := func() *x509.Certificate {
		t.Helper()
		conn, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the served certificate is what is checked
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	assert.NotEqual(t, "test-ca", served().Issuer.CommonName, "self-signed until the getter has a certificate")

	issued := ca.issue(t, "system:node:node-a", x509.ExtKeyUsageServerAuth)
	current.Store(&issued)
	assert.Equal(t, "test-ca", served().Issuer.CommonName, "the getter's certificate")
	assert.Equal(t, "system:node:node-a", served().Subject.CommonName)

	alice := client(t, ca.issue(t, "alice", x509.ExtKeyUsageClientAuth, "dev"))
	code, body, _ := get(t, alice, s, "/whoami")
	assert.Equal(t, 200, code)
	assert.Equal(t, "alice [dev system:authenticated]", body, "client certificates still authenticate")
}

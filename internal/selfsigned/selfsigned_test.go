package selfsigned

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIssuedCertificateChainsToTheCA(t *testing.T) {
	now := time.Now()
	ca, err := NewCA("test-ca", now.Add(-time.Minute), now.Add(time.Hour))
	require.NoError(t, err)
	assert.True(t, ca.Cert.IsCA)
	assert.True(t, ca.Cert.MaxPathLenZero)

	certPEM, keyPEM, err := ca.Issue(Leaf{
		Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}},
		Hosts:   []string{"node-a", "127.0.0.1"},
		Usage:   x509.ExtKeyUsageServerAuth, NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour),
	})
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	assert.False(t, leaf.IsCA)
	assert.Equal(t, []string{"node-a"}, leaf.DNSNames)
	assert.True(t, leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")))
	assert.Equal(t, ca.Cert.NotAfter, leaf.NotAfter, "cut to the CA's end")

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.CertPEM)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "node-a", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.Error(t, err, "issued for serving only")
}

func TestSelfSignedCertIsItsOwnIssuer(t *testing.T) {
	now := time.Now()
	certPEM, keyPEM, err := Cert(Leaf{Subject: pkix.Name{CommonName: "node-a"}, Hosts: []string{"10.0.0.1", "node-a"},
		Usage: x509.ExtKeyUsageServerAuth, NotBefore: now, NotAfter: now.Add(time.Hour)})
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	require.NoError(t, err)
	assert.False(t, cert.IsCA)
	assert.Equal(t, cert.Subject.String(), cert.Issuer.String())
	pinned := x509.NewCertPool()
	pinned.AddCert(cert)
	_, err = cert.Verify(x509.VerifyOptions{Roots: pinned, DNSName: "10.0.0.1", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	assert.NoError(t, err)
}

package api

import (
	"crypto/ecdsa"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func leaf(t *testing.T, certFile, keyFile string) *tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	require.NoError(t, err)
	return &pair
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// A self-signed certificate is made for every host, kept across restarts while it still
// serves them, and replaced when a host is new, it nears its end, or the files are damaged.
func TestSelfSignedCertificate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	hosts := []string{"node-a", "127.0.0.1", "node-a.example"}
	now := time.Now()

	certFile, keyFile, why, err := ensureSelfSignedCert(dir, hosts, now)
	require.NoError(t, err)
	assert.Equal(t, "created: none yet", why)
	assert.Equal(t, filepath.Join(dir, "kubelet.crt"), certFile)
	assert.Equal(t, filepath.Join(dir, "kubelet.key"), keyFile)
	cert := leaf(t, certFile, keyFile)
	for _, h := range hosts {
		assert.NoError(t, cert.Leaf.VerifyHostname(h))
	}
	assert.Equal(t, "node-a", cert.Leaf.DNSNames[0])
	assert.IsType(t, &ecdsa.PrivateKey{}, cert.PrivateKey, "ECDSA: each TLS handshake signs with it")
	st, err := os.Stat(keyFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the key is the agent's alone")
	first := read(t, certFile)

	t.Run("reused by a restart", func(t *testing.T) {
		_, _, why, err := ensureSelfSignedCert(dir, hosts, now.Add(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, "reused", why)
		assert.Equal(t, first, read(t, certFile))
	})
	t.Run("reused for fewer hosts", func(t *testing.T) {
		_, _, why, err := ensureSelfSignedCert(dir, hosts[:1], now)
		require.NoError(t, err)
		assert.Equal(t, "reused", why)
		assert.Equal(t, first, read(t, certFile))
	})
	t.Run("replaced near its end", func(t *testing.T) {
		end := cert.Leaf.NotAfter
		_, _, why, err := ensureSelfSignedCert(dir, hosts, end.Add(-selfSignedRenewBefore-time.Minute))
		require.NoError(t, err)
		assert.Equal(t, "reused", why, "a minute before the renewal margin it is kept")
		_, _, why, err = ensureSelfSignedCert(dir, hosts, end.Add(-selfSignedRenewBefore+time.Minute))
		require.NoError(t, err)
		assert.Contains(t, why, "created: the old one is valid from")
		assert.NotEqual(t, first, read(t, certFile))
	})
	t.Run("replaced for a new address", func(t *testing.T) {
		before := read(t, certFile)
		more := append(hosts[:len(hosts):len(hosts)], "10.0.0.7")
		_, _, why, err := ensureSelfSignedCert(dir, more, now)
		require.NoError(t, err)
		assert.Equal(t, "created: the old one is not for 10.0.0.7", why)
		assert.NotEqual(t, before, read(t, certFile))
		for _, h := range more {
			assert.NoError(t, leaf(t, certFile, keyFile).Leaf.VerifyHostname(h))
		}
	})
	t.Run("replaced when the key does not match", func(t *testing.T) {
		other := t.TempDir()
		_, otherKey, _, err := ensureSelfSignedCert(other, hosts, now)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(keyFile, []byte(read(t, otherKey)), 0o600))
		before := read(t, certFile)
		_, _, why, err := ensureSelfSignedCert(dir, hosts, now)
		require.NoError(t, err)
		assert.Contains(t, why, "created: tls: private key does not match public key")
		assert.NotEqual(t, before, read(t, certFile))
		leaf(t, certFile, keyFile) // a pair again
	})
}

func TestCertificateHosts(t *testing.T) {
	assert.Equal(t, []string{"node-a", "127.0.0.1", "node-a.local"},
		certificateHosts(Config{NodeName: "node-a", Hosts: []string{"127.0.0.1", "node-a", "", "node-a.local", "127.0.0.1"}, Address: "0.0.0.0"}),
		"node name first, no repeats, no unspecified address")
	assert.Equal(t, []string{"node-a", "10.0.0.7", "192.168.1.2"},
		certificateHosts(Config{NodeName: "node-a", Hosts: []string{"10.0.0.7"}, Address: "192.168.1.2"}),
		"a specific listen address is a name clients use")
}

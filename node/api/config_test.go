package api

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes/fake"
)

// The zero values: with a client the API listens on every address and asks the API server;
// without one, on loopback. TTLs: zero is the kubelet's default, negative is no caching.
func TestConfigDefaults(t *testing.T) {
	cs := fake.NewClientset()
	withClient, err := Config{NodeName: "n", CertDirectory: "/d", TokenReviews: cs.AuthenticationV1().TokenReviews(),
		SubjectAccessReviews: cs.AuthorizationV1().SubjectAccessReviews()}.complete()
	require.NoError(t, err)
	assert.Equal(t, "0.0.0.0", withClient.Address)
	assert.Equal(t, AuthorizationModeWebhook, withClient.AuthorizationMode)
	assert.Equal(t, 2*time.Minute, withClient.AuthenticationCacheTTL)
	assert.Equal(t, 5*time.Minute, withClient.AuthorizedCacheTTL)
	assert.Equal(t, 30*time.Second, withClient.UnauthorizedCacheTTL)

	standalone, err := Config{NodeName: "n", CertDirectory: "/d", ClientCAFile: "/ca", AuthorizationMode: AuthorizationModeAlwaysAllow,
		AuthenticationCacheTTL: -1, AuthorizedCacheTTL: time.Second, UnauthorizedCacheTTL: -time.Second}.complete()
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", standalone.Address)
	assert.Equal(t, time.Duration(0), standalone.AuthenticationCacheTTL, "not cached")
	assert.Equal(t, time.Second, standalone.AuthorizedCacheTTL)
	assert.Equal(t, time.Duration(0), standalone.UnauthorizedCacheTTL, "not cached")
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ok := Config{NodeName: "node-a", CertDirectory: dir, Anonymous: true, AuthorizationMode: AuthorizationModeAlwaysAllow}
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no node name", func(c *Config) { c.NodeName = "" }, "NodeName is required"},
		{"bad address", func(c *Config) { c.Address = "localhost" }, `Address "localhost" is not an IP address`},
		{"bad port", func(c *Config) { c.Port = 70000 }, "Port 70000 is not a port"},
		{"cert without key", func(c *Config) { c.TLSCertFile = "x.crt" }, "go together"},
		{"no certificate at all", func(c *Config) { c.CertDirectory = "" }, "CertDirectory is required"},
		{"bad TLS version", func(c *Config) { c.TLSMinVersion = "VersionTLS99" }, "TLSMinVersion"},
		{"bad cipher", func(c *Config) { c.TLSCipherSuites = []string{"TLS_NOPE"} }, "TLSCipherSuites"},
		{"no authentication", func(c *Config) { c.Anonymous = false }, "no way to authenticate a request"},
		{"webhook without client", func(c *Config) { c.AuthorizationMode = "" }, "Webhook needs Config.SubjectAccessReviews"},
		{"unknown mode", func(c *Config) { c.AuthorizationMode = "RBAC" }, `unknown authorization mode "RBAC"`},
		{"missing cert file", func(c *Config) {
			c.TLSCertFile, c.TLSPrivateKeyFile = filepath.Join(dir, "no.crt"), filepath.Join(dir, "no.key")
		}, "serving certificate: open"},
		{"missing client CA", func(c *Config) { c.ClientCAFile = filepath.Join(dir, "no-ca.crt") }, "client CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.change(&c)
			_, err := New(c)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), "%v, want %q", err, tc.want)
		})
	}
	_, err := New(ok)
	assert.NoError(t, err)
}

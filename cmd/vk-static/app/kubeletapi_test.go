package app

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/node/api"
)

// Which kubelet API the flags ask for: served by default (Webhook for both, the kubelet's cache
// TTLs, a self-signed certificate and the local administrator in <root-dir>/pki), standalone
// too; not served with --port 0; flag TTLs of 0 are no caching.
func TestKubeletAPIFromFlags(t *testing.T) {
	withAPIServer := []string{"--kubeconfig", "/etc/vk-static/node.kubeconfig", "--root-dir", "/var/lib/x"}
	for _, tc := range []struct {
		name    string
		args    []string
		want    *api.Config
		whyNone string
	}{{
		name: "with an API server",
		args: withAPIServer,
		want: &api.Config{Port: 10250, CertDirectory: "/var/lib/x/pki", AuthorizationMode: "Webhook",
			LocalAdmin: true, AuthenticationCacheTTL: 2 * time.Minute, AuthorizedCacheTTL: 5 * time.Minute, UnauthorizedCacheTTL: 30 * time.Second,
			StreamingConnectionIdleTimeout: 4 * time.Hour},
	}, {
		name:    "--port 0",
		args:    append(withAPIServer, "--port", "0"),
		whyNone: "--port is 0",
	}, {
		// `make run`: served to the local administrator only (Webhook, and no API server to ask).
		name: "standalone",
		args: []string{"--root-dir", "/r"},
		want: &api.Config{Port: 10250, CertDirectory: "/r/pki", AuthorizationMode: "Webhook",
			LocalAdmin: true, AuthenticationCacheTTL: 2 * time.Minute, AuthorizedCacheTTL: 5 * time.Minute, UnauthorizedCacheTTL: 30 * time.Second,
			StreamingConnectionIdleTimeout: 4 * time.Hour},
	}, {
		name: "standalone with a client CA",
		args: []string{"--root-dir", "/r", "--client-ca-file", "/ca.crt", "--authorization-mode", "AlwaysAllow"},
		want: &api.Config{Port: 10250, CertDirectory: "/r/pki", ClientCAFile: "/ca.crt", AuthorizationMode: "AlwaysAllow",
			LocalAdmin: true, AuthenticationCacheTTL: 2 * time.Minute, AuthorizedCacheTTL: 5 * time.Minute, UnauthorizedCacheTTL: 30 * time.Second,
			StreamingConnectionIdleTimeout: 4 * time.Hour},
	}, {
		name: "every flag",
		args: append(withAPIServer, "--address", "10.0.0.7", "--port", "11250",
			"--tls-cert-file", "/tls.crt", "--tls-private-key-file", "/tls.key", "--tls-min-version", "VersionTLS13",
			"--tls-cipher-suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
			"--client-ca-file", "/ca.crt", "--anonymous-auth", "--authentication-token-webhook=false",
			"--authentication-token-webhook-cache-ttl", "0", "--authorization-mode", "AlwaysAllow",
			"--authorization-webhook-cache-authorized-ttl", "1m", "--authorization-webhook-cache-unauthorized-ttl", "0s",
			"--streaming-connection-idle-timeout", "0"),
		want: &api.Config{Address: "10.0.0.7", Port: 11250, TLSCertFile: "/tls.crt", TLSPrivateKeyFile: "/tls.key",
			CertDirectory: "/var/lib/x/pki", TLSMinVersion: "VersionTLS13",
			TLSCipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
			ClientCAFile:    "/ca.crt", Anonymous: true, DisableTokenWebhook: true, AuthenticationCacheTTL: -1, LocalAdmin: true,
			AuthorizationMode: "AlwaysAllow", AuthorizedCacheTTL: time.Minute, UnauthorizedCacheTTL: -1,
			StreamingConnectionIdleTimeout: -1},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(t, tc.args...)
			require.NoError(t, err)
			got, why := o.kubeletAPI()
			if got != nil {
				got.Configz = nil // TestConfigz
			}
			assert.Equal(t, tc.want, got)
			if tc.whyNone == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.whyNone)
			}
		})
	}
}

func TestKubeletAPIFlagsAreValidated(t *testing.T) {
	kubeconfig := []string{"--kubeconfig", "/k"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--address", "localhost"}, "--address"},
		{[]string{"--port", "70000"}, "--port"},
		{[]string{"--tls-cert-file", "/tls.crt"}, "--tls-cert-file: and --tls-private-key-file go together"},
		{[]string{"--tls-private-key-file", "/tls.key"}, "--tls-cert-file: and --tls-private-key-file go together"},
		{[]string{"--tls-min-version", "VersionTLS99"}, "--tls-min-version"},
		{[]string{"--tls-cipher-suites", "TLS_NOPE"}, "--tls-cipher-suites"},
		{[]string{"--authorization-mode", "RBAC"}, `--authorization-mode: "RBAC" is not Webhook or AlwaysAllow`},
		{[]string{"--authentication-token-webhook-cache-ttl", "-1s"}, "--authentication-token-webhook-cache-ttl"},
		{[]string{"--authorization-webhook-cache-authorized-ttl", "-1s"}, "--authorization-webhook-cache-authorized-ttl"},
		{[]string{"--authorization-webhook-cache-unauthorized-ttl", "-1s"}, "--authorization-webhook-cache-unauthorized-ttl"},
		// Served standalone, Webhook authorization has nobody to ask about the users of a
		// client CA or anonymous requests.
		{[]string{"--anonymous-auth"}, "--authorization-mode: Webhook asks the API server"},
		{[]string{"--client-ca-file", "/ca.crt"}, "--authorization-mode: Webhook asks the API server"},
		// With an API server, turning tokens off leaves nothing to authenticate with.
		{append(kubeconfig, "--authentication-token-webhook=false"), "--authentication-token-webhook: off"},
	} {
		_, err := parse(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one with %q", tc.args, err, tc.want)
		}
	}
	for _, ok := range [][]string{
		{"--anonymous-auth", "--authorization-mode", "AlwaysAllow"},
		{"--anonymous-auth", "--port", "0"}, // not served: nothing to authorize
		{},                                  // standalone, Webhook: the local administrator only
		append(kubeconfig, "--authentication-token-webhook=false", "--client-ca-file", "/ca.crt"),
	} {
		_, err := parse(t, ok...)
		assert.NoError(t, err, ok)
	}
}

// The KubeletConfiguration's fields for the kubelet API are applied, and flags still win.
func TestKubeletAPIConfigFile(t *testing.T) {
	cfg := writeFile(t, "kubelet.yaml", `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
tlsCertFile: /tls.crt
tlsPrivateKeyFile: /tls.key
tlsMinVersion: VersionTLS13
tlsCipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
authentication:
  x509: {clientCAFile: /ca.crt}
  webhook: {enabled: false, cacheTTL: 1m}
  anonymous: {enabled: true}
authorization:
  mode: AlwaysAllow
  webhook: {cacheAuthorizedTTL: 2m, cacheUnauthorizedTTL: 10s}
streamingConnectionIdleTimeout: 5m
`)
	o, err := parse(t, "--config", cfg, "--kubeconfig", "/k", "--root-dir", "/r", "--authorization-webhook-cache-unauthorized-ttl", "20s")
	require.NoError(t, err)
	got, _ := o.kubeletAPI()
	got.Configz = nil // TestConfigz
	assert.Equal(t, &api.Config{Port: 10250, TLSCertFile: "/tls.crt", TLSPrivateKeyFile: "/tls.key", CertDirectory: filepath.Join("/r", "pki"),
		TLSMinVersion: "VersionTLS13", TLSCipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		ClientCAFile: "/ca.crt", Anonymous: true, DisableTokenWebhook: true, AuthenticationCacheTTL: time.Minute, LocalAdmin: true,
		AuthorizationMode: "AlwaysAllow", AuthorizedCacheTTL: 2 * time.Minute, UnauthorizedCacheTTL: 20 * time.Second,
		StreamingConnectionIdleTimeout: 5 * time.Minute}, got)

	bad := writeFile(t, "bad.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nauthorization: {mode: Node}\n")
	_, err = parse(t, "--config", bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--authorization-mode")
}

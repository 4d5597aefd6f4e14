package nodecert

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/vk-static/vk-static/internal/selfsigned"
)

// pair is a self-signed client certificate for cn valid until notAfter, as PEM.
func pair(t *testing.T, cn string, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := selfsigned.Cert(selfsigned.Leaf{
		Subject: pkix.Name{CommonName: cn}, Usage: x509.ExtKeyUsageClientAuth,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
	})
	require.NoError(t, err)
	return certPEM, keyPEM
}

func writeKubeconfig(t *testing.T, path string, auth *clientcmdapi.AuthInfo) {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443", CertificateAuthorityData: []byte("ca")}
	kc.AuthInfos["a"] = auth
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "a"}
	kc.CurrentContext = "x"
	writeConfig(t, path, kc)
}

func writeConfig(t *testing.T, path string, kc *clientcmdapi.Config) {
	t.Helper()
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
}

func TestKubeconfigUsable(t *testing.T) {
	dir := t.TempDir()
	validCert, validKey := pair(t, "system:node:a", time.Now().Add(time.Hour))
	expiredCert, expiredKey := pair(t, "system:node:a", time.Now().Add(-time.Minute))
	for _, tc := range []struct {
		name   string
		auth   *clientcmdapi.AuthInfo // nil: no file
		usable bool
	}{
		{name: "missing"},
		{name: "token only", auth: &clientcmdapi.AuthInfo{Token: "abc.def"}},
		{name: "expired certificate", auth: &clientcmdapi.AuthInfo{ClientCertificateData: expiredCert, ClientKeyData: expiredKey}},
		{name: "valid certificate", auth: &clientcmdapi.AuthInfo{ClientCertificateData: validCert, ClientKeyData: validKey}, usable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.auth != nil {
				writeKubeconfig(t, path, tc.auth)
			}
			usable, why := kubeconfigUsable(path)
			assert.Equal(t, tc.usable, usable, why)
			if !usable {
				assert.NotEmpty(t, why, "an unusable kubeconfig says why")
			}
		})
	}
}

func TestWriteKubeconfigFor(t *testing.T) {
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap.kubeconfig")
	writeKubeconfig(t, bootstrap, &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"})
	out := filepath.Join(dir, "sub", "node.kubeconfig")
	pemPath := filepath.Join(dir, "kubelet-client-current.pem")
	certPEM, keyPEM := pair(t, "system:node:a", time.Now().Add(time.Hour))
	require.NoError(t, os.WriteFile(pemPath, append(certPEM, keyPEM...), 0o600))
	require.NoError(t, writeKubeconfigFor(bootstrap, out, pemPath))

	st, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	cfg, err := clientcmd.BuildConfigFromFlags("", out)
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:6443", cfg.Host)
	assert.Equal(t, []byte("ca"), cfg.CAData)
	assert.Equal(t, pemPath, cfg.CertFile)
	assert.Equal(t, pemPath, cfg.KeyFile)
	assert.Empty(t, cfg.BearerToken, "the bootstrap token is not copied")
	left, err := filepath.Glob(filepath.Join(dir, "sub", ".kubeconfig-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "no temporary file left")
}

func TestRequestName(t *testing.T) {
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	k1, k2 := key(), key()
	subject := func(node string) pkix.Name {
		return pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}
	}
	usages := clientUsages(k1)
	name := func(k *ecdsa.PrivateKey, node string) string {
		n, err := requestName(k.Public(), subject(node), usages)
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, name(k1, "a"), name(k1, "a"), "the same request has the same name")
	assert.NotEqual(t, name(k1, "a"), name(k2, "a"), "another key")
	assert.NotEqual(t, name(k1, "a"), name(k1, "b"), "another node")
	assert.Regexp(t, `^node-csr-[A-Za-z0-9_-]+$`, name(k1, "a"))
	assert.Equal(t, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, usages)
}

func TestExplainRequestError(t *testing.T) {
	unauthorized := apierrors.NewUnauthorized("Unauthorized")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "", errors.New("no"))
	other := errors.New("connection refused")
	for _, tc := range []struct {
		err      error
		contains string
	}{
		{unauthorized, "refused the credentials of --bootstrap-kubeconfig"},
		{forbidden, "--bootstrap-kubeconfig may not request a node certificate"},
		{other, "connection refused"},
	} {
		got := explainRequestError(tc.err)
		assert.ErrorContains(t, got, tc.contains)
		assert.ErrorIs(t, got, tc.err, "the cause stays visible to errors.Is")
	}
}

func TestDenial(t *testing.T) {
	csr := func(conds ...certificatesv1.CertificateSigningRequestCondition) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Status: certificatesv1.CertificateSigningRequestStatus{Conditions: conds}}
	}
	assert.Empty(t, denial(csr()), "pending")
	assert.Empty(t, denial(csr(certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue})))
	assert.Equal(t, `Denied, reason "Nope", message "not you"`,
		denial(csr(certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "Nope", Message: "not you"})))
	assert.Contains(t, denial(csr(certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "SignerFailure"})), "SignerFailure")
}

// fakeManager is a CurrentCertificate the test sets.
type fakeManager struct {
	current atomic.Pointer[tls.Certificate]
}

func (m *fakeManager) Current() *tls.Certificate { return m.current.Load() }
func (m *fakeManager) set(t *testing.T, cn string) {
	c, k := pair(t, cn, time.Now().Add(time.Hour))
	cert, err := tls.X509KeyPair(c, k)
	require.NoError(t, err)
	m.current.Store(&cert)
}

// TestRotatingConfig: every handshake takes the manager's current certificate, and a rotation
// closes the connections kept alive, so that the next request presents the new one.
func TestRotatingConfig(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			_, _ = w.Write([]byte("anonymous"))
			return
		}
		_, _ = w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	m := &fakeManager{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := rotatingConfig(ctx, &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caPEM}}, m, 10*time.Millisecond)
	require.NoError(t, err)
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	whoami := func() string {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		buf := make([]byte, 64)
		n, _ := resp.Body.Read(buf)
		return string(buf[:n])
	}
	assert.Equal(t, "anonymous", whoami(), "no certificate yet")
	m.set(t, "first")
	assert.Eventually(t, func() bool { return whoami() == "first" }, 5*time.Second, 20*time.Millisecond)
	m.set(t, "second")
	assert.Eventually(t, func() bool { return whoami() == "second" }, 5*time.Second, 20*time.Millisecond,
		"the kept-alive connection is closed on rotation")
}

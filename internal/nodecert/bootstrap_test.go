package nodecert

import (
	"context"
	"crypto"
	"encoding/pem"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	testingclock "k8s.io/utils/clock/testing"
)

// TestBootstrapRetriesARefusedToken: an API server that answers Unauthorized is asked again
// after the back-off, longer each time, until the context ends; nothing but the request's key
// (kept, so that the next attempt finds the same request) is left behind.
func TestBootstrapRetriesARefusedToken(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap.kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	kc.AuthInfos["a"] = &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"}
	kc.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "a"}
	kc.CurrentContext = "x"
	writeConfig(t, bootstrap, kc)

	clk := testingclock.NewFakeClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	certDir, kubeconfig := filepath.Join(dir, "pki"), filepath.Join(dir, "node.kubeconfig")
	go func() {
		done <- Bootstrap(ctx, BootstrapConfig{
			KubeconfigPath: kubeconfig, BootstrapKubeconfigPath: bootstrap, CertDir: certDir, NodeName: "node-a",
			Backoff: wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute},
			Clock:   clk,
		})
	}()
	attempted := func(n int32) {
		t.Helper()
		require.Eventually(t, func() bool { return hits.Load() == n && clk.HasWaiters() }, 10*time.Second, 5*time.Millisecond,
			"attempt %d made, then waiting (hits %d)", n, hits.Load())
	}
	attempted(1)
	clk.Step(time.Second)
	attempted(2)
	clk.Step(time.Second) // the second wait is 2 s
	assert.Equal(t, int32(2), hits.Load(), "no attempt before the back-off has passed")
	clk.Step(time.Second)
	attempted(3)

	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Bootstrap did not return when its context ended")
	}
	_, err := os.Stat(kubeconfig)
	assert.True(t, os.IsNotExist(err), "no kubeconfig: %v", err)
	entries, err := os.ReadDir(certDir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{tmpKeyFile}, names)
}

// TestDefaultBootstrapBackoff pins the kubelet-like numbers: 2 s doubling to a minute, where it
// stays, each delay at most a tenth longer.
func TestDefaultBootstrapBackoff(t *testing.T) {
	b := DefaultBootstrapBackoff()
	for i, want := range []time.Duration{2, 4, 8, 16, 32, 60, 60, 60} {
		want *= time.Second
		got := b.Step()
		assert.True(t, got >= want && got <= want+want/10, "delay %d: %v, want %v plus up to a tenth", i+1, got, want)
	}
}

// TestBootstrapReplacesAKeyWhoseRequestCannotBeUsed: the request named after the bootstrap key
// exists but is of no use — its certificate expired (the agent stopped before storing it, and
// stayed down), or another key signed it. The next attempt makes a new key, hence a request of
// another name, instead of finding the same one until an operator deletes it.
func TestBootstrapReplacesAKeyWhoseRequestCannotBeUsed(t *testing.T) {
	for name, existing := range map[string]func(t *testing.T, ca *testCA, ourKey []byte) (csrPEM, certPEM []byte){
		"expired certificate": func(t *testing.T, ca *testCA, ourKey []byte) ([]byte, []byte) {
			csrPEM := nodeCSR(t, ourKey)
			return csrPEM, ca.sign(t, csrPEM, time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour))
		},
		"another key": func(t *testing.T, ca *testCA, ourKey []byte) ([]byte, []byte) {
			other, err := keyutil.MakeEllipticPrivateKeyPEM()
			require.NoError(t, err)
			return nodeCSR(t, other), nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			certDir, kubeconfig, bootstrap := filepath.Join(dir, "pki"), filepath.Join(dir, "node.kubeconfig"), filepath.Join(dir, "bootstrap.kubeconfig")
			writeKubeconfig(t, bootstrap, &clientcmdapi.AuthInfo{Token: "abcdef.0123456789abcdef"})
			require.NoError(t, os.MkdirAll(certDir, 0o700))
			keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(certDir, tmpKeyFile), keyPEM, 0o600))
			key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
			require.NoError(t, err)
			oldName, err := requestName(key.(crypto.Signer).Public(), nodeSubject("node-a"), clientUsages(key))
			require.NoError(t, err)

			ca, client := newTestCA(t), newFakeClientset()
			csrs := client.CertificatesV1().CertificateSigningRequests()
			csrPEM, certPEM := existing(t, ca, keyPEM)
			_, err = csrs.Create(context.Background(), &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{Name: oldName},
				Spec:       certificatesv1.CertificateSigningRequestSpec{Request: csrPEM, SignerName: certificatesv1.KubeAPIServerClientKubeletSignerName},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
			if certPEM != nil {
				approve(t, client, oldName, certPEM)
			}

			clk := testingclock.NewFakeClock(time.Now())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- Bootstrap(ctx, BootstrapConfig{
					KubeconfigPath: kubeconfig, BootstrapKubeconfigPath: bootstrap, CertDir: certDir, NodeName: "node-a",
					Backoff:   wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute},
					Clock:     clk,
					newClient: func(*rest.Config) (CSRClient, error) { return csrs, nil },
				})
			}()
			require.Eventually(t, clk.HasWaiters, 10*time.Second, time.Millisecond, "first attempt failed, waiting")
			clk.Step(time.Second)
			var newReq *certificatesv1.CertificateSigningRequest
			require.Eventually(t, func() bool {
				list, err := csrs.List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return false
				}
				for i := range list.Items {
					if list.Items[i].Name != oldName {
						newReq = &list.Items[i]
					}
				}
				return newReq != nil
			}, 10*time.Second, time.Millisecond, "a request of another name")
			approve(t, client, newReq.Name, ca.sign(t, newReq.Spec.Request, time.Now().Add(-time.Minute), time.Now().Add(time.Hour)))
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("Bootstrap did not return once the new request was issued")
			}
			usable, why := kubeconfigUsable(kubeconfig)
			assert.True(t, usable, why)
			_, err = os.Stat(filepath.Join(certDir, tmpKeyFile))
			assert.True(t, os.IsNotExist(err), "the new request's key is stored, not left behind: %v", err)
		})
	}
}

// nodeCSR is a certificate request for system:node:node-a signed by the key keyPEM.
func nodeCSR(t *testing.T, keyPEM []byte) []byte {
	t.Helper()
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	require.NoError(t, err)
	subject := nodeSubject("node-a")
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	require.NoError(t, err)
	return csrPEM
}

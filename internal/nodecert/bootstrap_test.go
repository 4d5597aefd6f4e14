package nodecert

import (
	"context"
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
	"k8s.io/apimachinery/pkg/util/wait"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/internal/testenv"
)

// With --kubelet-certificate-authority (testenv's VerifyKubeletServingCerts) the API server
// verifies the agent's serving certificate, as a hardened production cluster does: an agent
// serving a certificate the cluster CA signed for its InternalIP gets kubectl logs through;
// an agent serving its own self-signed certificate does not — the API server refuses to talk
// to it, and its log says why.
func TestAPIServerVerifiesTheServingCertificate(t *testing.T) {
	ctx := context.Background()
	verifying, err := testenv.Start(ctx, testenv.Options{VerifyKubeletServingCerts: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		verifying.Stop(t.Failed())
		if t.Failed() {
			t.Logf("control-plane logs kept in %s", verifying.Dir)
		}
	})
	ns := verifying.Namespace(t)
	pods := verifying.Admin.CoreV1().Pods(ns)

	// The agent listens on, and its Node reports, 127.0.0.1 only: the API server dials that.
	certPEM, keyPEM, err := verifying.IssueServingCert("127.0.0.1")
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
	require.NoError(t, os.WriteFile(certFile, certPEM, 0o600))
	require.NoError(t, os.WriteFile(keyFile, keyPEM, 0o600))
	trusted := startAgent(t, agentOptions{env: verifying, node: nodeNameFor(t) + "-ca",
		extraArgs: []string{"--tls-cert-file", certFile, "--tls-private-key-file", keyFile}})
	_, err = pods.Create(ctx, apiPod("trusted", trusted.Node), metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := pods.GetLogs("trusted", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
		require.NoError(c, err, "%s", logs)
		assert.Equal(c, "mock: created container main (image nginx:1)\nmock: started container main\n", string(logs))
	}, 20*time.Second, 100*time.Millisecond, "kubectl logs through an API server that verifies the agent")

	selfSigned := startAgent(t, agentOptions{env: verifying, node: nodeNameFor(t) + "-self"})
	_, err = pods.Create(ctx, apiPod("untrusted", selfSigned.Node), metav1.CreateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		p, err := pods.Get(ctx, "untrusted", metav1.GetOptions{})
		require.NoError(c, err)
		assert.Equal(c, corev1.PodRunning, p.Status.Phase)
	}, 20*time.Second, 100*time.Millisecond, "the pod runs: the agent works, only its certificate is not trusted")
	logs, err := pods.GetLogs("untrusted", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	require.Error(t, err, "%s", logs)
	// The API server tells the client only that it failed ("unknown"); its log says why.
	assert.True(t, apierrors.IsInternalError(err), "%v", err)
	apiLog, err := os.ReadFile(filepath.Join(verifying.Dir, "kube-apiserver.log"))
	require.NoError(t, err)
	assert.Regexp(t, `/containerLogs/`+ns+`/untrusted/main.*x509: certificate signed by unknown authority`, string(apiLog))
}

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
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vk-static/vk-static/deploy"
	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// A control plane set up as a hardened kubeadm cluster is, and the agent deployed as
// docs/deploy.md says: the API server verifies the agent's serving certificate
// (--kubelet-certificate-authority), and its kubelet client is kubeadm's, in no group, allowed
// the kubelet API by deploy/rbac.yaml only.
//
//   - An agent serving a certificate the cluster CA signed for its InternalIP: kubectl logs is
//     refused by the agent (403) until deploy/rbac.yaml is applied, then works.
//   - An agent serving its own self-signed certificate: the API server refuses to talk to it,
//     and its log says why.
func TestAPIServerVerifiesTheServingCertificate(t *testing.T) {
	ctx := context.Background()
	verifying, err := testenv.Start(ctx, testenv.Options{VerifyKubeletServingCerts: true, KubeadmKubeletClient: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		verifying.Stop(t.Failed())
		if t.Failed() {
			t.Logf("control-plane logs kept in %s", verifying.Dir)
		}
	})
	ns := verifying.Namespace(t)
	pods := verifying.Admin.CoreV1().Pods(ns)
	running := func(name string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			require.NoError(c, err)
			assert.Equal(c, corev1.PodRunning, p.Status.Phase)
		}, 20*time.Second, 100*time.Millisecond, "%s runs", name)
	}

	// The agent listens on, and its Node reports, 127.0.0.1 only: the API server dials that.
	certPEM, keyPEM, err := verifying.IssueServingCert("127.0.0.1")
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key")
	require.NoError(t, os.WriteFile(certFile, certPEM, 0o600))
	require.NoError(t, os.WriteFile(keyFile, keyPEM, 0o600))
	trusted := startAgent(t, agentOptions{env: verifying, node: agentproc.NodeName(t) + "-ca", extraArgs: []string{
		"--tls-cert-file", certFile, "--tls-private-key-file", keyFile,
		// A denial is not remembered, so that the binding works as soon as RBAC has it.
		"--authorization-webhook-cache-unauthorized-ttl", "0",
	}})
	_, err = pods.Create(ctx, apiPod("trusted", trusted.Node), metav1.CreateOptions{})
	require.NoError(t, err)
	running("trusted")

	logs, err := pods.GetLogs("trusted", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	require.Error(t, err, "without RBAC the agent refuses kubeadm's kubelet client: %s", logs)
	assert.Contains(t, string(logs)+err.Error(), "Forbidden (user=kube-apiserver-kubelet-client, verb=get, resource=nodes, subresource(s)=[proxy])")

	applyRBAC(t, verifying)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		logs, err := pods.GetLogs("trusted", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
		require.NoError(c, err, "%s", logs)
		assert.Equal(c, "mock: created container main (image nginx:1)\nmock: started container main\n", string(logs))
	}, 20*time.Second, 100*time.Millisecond, "kubectl logs through an API server that verifies the agent, allowed by deploy/rbac.yaml")

	selfSigned := startAgent(t, agentOptions{env: verifying, node: agentproc.NodeName(t) + "-self"})
	_, err = pods.Create(ctx, apiPod("untrusted", selfSigned.Node), metav1.CreateOptions{})
	require.NoError(t, err)
	running("untrusted") // the agent works; only its certificate is not trusted
	logs, err = pods.GetLogs("untrusted", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	require.Error(t, err, "%s", logs)
	// The API server tells the client only that it failed ("unknown"); its log says why.
	assert.True(t, apierrors.IsInternalError(err), "%v", err)
	apiLog, err := os.ReadFile(filepath.Join(verifying.Dir, "kube-apiserver.log"))
	require.NoError(t, err)
	assert.Regexp(t, `/containerLogs/`+ns+`/untrusted/main.*x509: certificate signed by unknown authority`, string(apiLog))
}

// applyRBAC creates deploy/rbac.yaml's objects, as kubectl apply -f would.
func applyRBAC(t *testing.T, env *testenv.Env) {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(deploy.RBAC(), nil, nil)
	require.NoError(t, err)
	binding, ok := obj.(*rbacv1.ClusterRoleBinding)
	require.True(t, ok, "deploy/rbac.yaml holds a %T", obj)
	_, err = env.Admin.RbacV1().ClusterRoleBindings().Create(context.Background(), binding, metav1.CreateOptions{})
	require.NoError(t, err)
}

package e2ekubeadm

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/cgrouptest"
	"github.com/vk-static/vk-static/test/support/kubeadmnode"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// tokenPattern is a bootstrap token, <id>.<secret>.
var tokenPattern = regexp.MustCompile(`^([a-z0-9]{6})\.[a-z0-9]{16}$`)

// testJoin: a second agent joins the cluster as `kubeadm join` makes a kubelet join. Its only
// credential is a token from `kubeadm token create`, in a bootstrap kubeconfig made of what
// join's discovery reads: the API server and CA of kube-public/cluster-info, once the
// controller manager's bootstrap signer has signed it for the token. The agent's certificate
// request is approved and signed by the controller manager (kubeadm's bootstrap-token RBAC),
// and its Node becomes Ready.
func (c *cluster) testJoin(t *testing.T) {
	ctx := context.Background()
	token := strings.TrimSpace(c.kubeadm.run(t, "token", "create", "--kubeconfig", kubeadmnode.AdminConf))
	m := tokenPattern.FindStringSubmatch(token)
	require.NotNil(t, m, "kubeadm token create printed %q", token)
	id := m[1]

	var server string
	var caData []byte
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		info, err := c.admin.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
		require.NoError(ct, err)
		require.Contains(ct, info.Data, "jws-kubeconfig-"+id, "cluster-info signed for the token")
		kc, err := clientcmd.Load([]byte(info.Data["kubeconfig"]))
		require.NoError(ct, err)
		require.Len(ct, kc.Clusters, 1)
		for _, cl := range kc.Clusters {
			server, caData = cl.Server, cl.CertificateAuthorityData
		}
	}, 2*time.Minute, 500*time.Millisecond, "kube-public/cluster-info with the bootstrap signer's jws-kubeconfig-%s", id)
	assert.Equal(t, "https://"+nodeIP.String()+":6443", server)

	joining := c.node + "-join"
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap.kubeconfig")
	require.NoError(t, testenv.WriteKubeconfig(bootstrap, &rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: caData}}))
	a, err := agentproc.Start(agentproc.Config{Binary: agentBinary, Dir: dir, Node: joining, Args: []string{
		"--kubeconfig", filepath.Join(dir, "kubeconfig"), "--bootstrap-kubeconfig", bootstrap, "--client-ca-file", kubeadmnode.CAFile,
		"--node-ip", nodeIP.String(), "--address", nodeIP.String(),
		"--provider", "process", "--process-allow-host-network", "--cgroup-root", cgrouptest.Root(t),
		"--node-status-update-frequency", "2s", "-v", "2",
	}})
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := a.Stop(20 * time.Second); err != nil {
			t.Error(err)
		}
		agentproc.FailOnLeaks(t, dir)
		if t.Failed() {
			log, _ := os.ReadFile(a.LogPath)
			t.Logf("log of %s:\n%s", joining, log)
		}
	})
	rctx, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	require.NoError(t, a.WaitReady(rctx))
	c.waitNodeReady(t, joining, restartTimeout)

	list, err := c.admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var approved int
	for _, csr := range list.Items {
		if csr.Spec.Username != "system:bootstrap:"+id || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
			continue
		}
		for _, cond := range csr.Status.Conditions {
			if cond.Type == certificatesv1.CertificateApproved {
				approved++
				assert.Equal(t, "AutoApproved", cond.Reason, "approved by the controller manager's csrapprover")
			}
		}
		assert.NotEmpty(t, csr.Status.Certificate, "%s signed", csr.Name)
	}
	assert.Equal(t, 1, approved, "one approved request of system:bootstrap:%s in %d", id, len(list.Items))

	// The agent's client certificate is the node's, signed by kubeadm's CA.
	data, err := os.ReadFile(filepath.Join(dir, "root", "pki", "kubelet-client-current.pem"))
	require.NoError(t, err)
	var cert *x509.Certificate
	for block, remaining := pem.Decode(data); block != nil; block, remaining = pem.Decode(remaining) {
		if block.Type == "CERTIFICATE" {
			cert, err = x509.ParseCertificate(block.Bytes)
			require.NoError(t, err)
			break
		}
	}
	require.NotNil(t, cert, "no certificate in kubelet-client-current.pem")
	assert.Equal(t, "system:node:"+joining, cert.Subject.CommonName)
	assert.Equal(t, []string{"system:nodes"}, cert.Subject.Organization)
	caPEM, err := os.ReadFile(kubeadmnode.CAFile)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err, "signed by kubeadm's CA")
}

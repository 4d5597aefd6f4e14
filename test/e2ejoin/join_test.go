package e2ejoin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/vk-static/vk-static/test/support/podwait"
	"github.com/vk-static/vk-static/test/support/testenv"
)

const staticPod = `apiVersion: v1
kind: Pod
metadata:
  name: static
spec:
  containers:
  - name: c
    image: busybox
`

// TestJoinRotateRestart: an agent given only a bootstrap token joins, runs a static pod (with
// its mirror) and an API pod as system:node:<name>, has its serving certificate approved by
// hand, rotates its client certificate twice without disturbing its pods, and, restarted
// after the token is gone, carries on with the certificate it has.
func TestJoinRotateRestart(t *testing.T) {
	ctx := context.Background()
	node := "join-a"
	token := env.BootstrapToken(t, testenv.BootstrapTokenOptions{})
	j := startJoining(t, node, token, "--rotate-server-certificates")
	require.NoError(t, j.WriteManifest("static.yaml", []byte(staticPod)))
	readyCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	require.NoError(t, j.WaitReady(readyCtx), j.log())

	// The credentials it obtained: kubelet-client-current.pem, 0600, named by --kubeconfig, for
	// system:node:join-a, signed by the cluster CA, from one CSR made with the token.
	current := filepath.Join(j.certDir, "kubelet-client-current.pem")
	st, err := os.Stat(current)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "mode of %s", current)
	kc, err := clientcmd.BuildConfigFromFlags("", j.kubeconfig)
	require.NoError(t, err)
	assert.Equal(t, current, kc.CertFile, "--kubeconfig's client certificate")
	assert.Equal(t, current, kc.KeyFile, "--kubeconfig's client key")
	first := leafOf(t, current)
	assert.Equal(t, "system:node:"+node, first.Subject.CommonName)
	assert.Equal(t, []string{"system:nodes"}, first.Subject.Organization)
	assert.Equal(t, "vk-static-test-ca", first.Issuer.CommonName)
	require.Len(t, csrsOf(ctx, t, bootstrapUser(token), certificatesv1.KubeAPIServerClientKubeletSignerName), 1, "bootstrap CSRs")

	// The Node, the mirror (NodeRestriction allows it only to system:node:join-a, owned by
	// its Node) and an API pod.
	ns := env.Namespace(t)
	apiPod := func(name string) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{
				NodeName:    node,
				Containers:  []corev1.Container{{Name: "c", Image: "busybox"}},
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			},
		}
		_, err := env.Admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	apiPod("api-1")
	mirrorName := j.MirrorName("static")
	pods := map[string]*corev1.Pod{} // by namespace/name, as first seen running
	running := func(namespace, name string) *corev1.Pod {
		t.Helper()
		return podwait.Until(t, env.Admin, namespace, name, 60*time.Second, "runs", podwait.Running)
	}
	pods["default/"+mirrorName] = running("default", mirrorName)
	pods[ns+"/api-1"] = running(ns, "api-1")
	owners := pods["default/"+mirrorName].OwnerReferences
	require.Len(t, owners, 1)
	assert.Equal(t, "Node", owners[0].Kind)
	assert.Equal(t, node, owners[0].Name)

	// The serving certificate: self-signed until an operator approves the node's request.
	served := func() *x509.Certificate {
		conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(j.APIPort)), &tls.Config{InsecureSkipVerify: true})
		require.NoError(t, err)
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	var servingCSR certificatesv1.CertificateSigningRequest
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		csrs := csrsOf(ctx, c, "system:node:"+node, certificatesv1.KubeletServingSignerName)
		require.NotEmpty(c, csrs)
		servingCSR = csrs[0]
	}, 30*time.Second, 200*time.Millisecond, "a serving CSR")
	assert.NotEqual(t, "vk-static-test-ca", served().Issuer.CommonName, "served before approval")
	servingCSR.Status.Conditions = append(servingCSR.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "E2EApproval", Message: "approved by the test",
	})
	_, err = env.Admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, servingCSR.Name, &servingCSR, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cert := served()
		assert.Equal(c, "vk-static-test-ca", cert.Issuer.CommonName)
		assert.Equal(c, "system:node:"+node, cert.Subject.CommonName)
		assert.True(c, slicesContainIP(cert.IPAddresses, "127.0.0.1"), "served for 127.0.0.1: %v", cert.IPAddresses)
	}, 60*time.Second, 500*time.Millisecond, "the approved serving certificate is served")

	// Two rotations of the client certificate: new pairs in --cert-dir, CSRs made by the node
	// itself and approved by the controller-manager, connections re-dialled with them.
	serials := map[string]bool{first.SerialNumber.String(): true}
	require.Eventually(t, func() bool {
		if cert, err := readLeaf(current); err == nil {
			serials[cert.SerialNumber.String()] = true
		}
		return len(serials) >= 3
	}, 200*time.Second, 500*time.Millisecond, "the client certificate rotates twice (serials seen: %v)", serials)
	assert.GreaterOrEqual(t, len(csrsOf(ctx, t, "system:node:"+node, certificatesv1.KubeAPIServerClientKubeletSignerName)), 2, "renewal CSRs by the node")
	// The agent looks for a new certificate every 10 s, as the kubelet, so two rotations within
	// one period close the connections once: what must hold is that it closes them for the
	// certificate now current (its notAfter is in the log line).
	require.Eventually(t, func() bool {
		cert, err := readLeaf(current)
		if err != nil {
			return false
		}
		log := j.log()
		return strings.Contains(log, "Client certificate rotated, closing connections") && strings.Contains(log, cert.NotAfter.String())
	}, 30*time.Second, 500*time.Millisecond, "the agent's connections follow the rotations to the current certificate")

	// Nothing was disturbed: the same pods, never restarted, and statuses still flow — the
	// Lease is renewed and a new pod's status arrives.
	for key, before := range pods {
		namespace, name, _ := strings.Cut(key, "/")
		now, err := env.Admin.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, before.UID, now.UID, "%s was not recreated", key)
		assert.Equal(t, corev1.PodRunning, now.Status.Phase, key)
		assert.Equal(t, startedAt(before), startedAt(now), "%s was not restarted", key)
	}
	rotatedAt := time.Now()
	require.Eventually(t, func() bool {
		lease, err := env.Admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
		return err == nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(rotatedAt)
	}, 20*time.Second, 200*time.Millisecond, "the Lease is renewed after the rotations")
	apiPod("api-2")
	running(ns, "api-2")

	// A restart: the token is gone, the certificate in --cert-dir is used as it is.
	id, _, _ := strings.Cut(token, ".")
	require.NoError(t, env.Admin.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, "bootstrap-token-"+id, metav1.DeleteOptions{}))
	restartCtx, cancel2 := context.WithTimeout(ctx, 90*time.Second)
	defer cancel2()
	require.NoError(t, j.Restart(restartCtx, 20*time.Second), j.log())
	assert.Equal(t, 1, strings.Count(j.log(), "Kubeconfig holds a valid client certificate, no bootstrap needed"), "the restarted agent reused its certificate")
	assert.Len(t, csrsOf(ctx, t, bootstrapUser(token), certificatesv1.KubeAPIServerClientKubeletSignerName), 1, "no new bootstrap CSR")
	apiPod("api-3")
	running(ns, "api-3")
}

func startedAt(p *corev1.Pod) string {
	var out []string
	for _, c := range p.Status.ContainerStatuses {
		s := fmt.Sprintf("%s restarts=%d", c.Name, c.RestartCount)
		if c.State.Running != nil {
			s += " started=" + c.State.Running.StartedAt.UTC().String()
		}
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func readLeaf(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}

func leafOf(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	c, err := readLeaf(path)
	require.NoError(t, err)
	return c
}

func slicesContainIP(ips []net.IP, want string) bool {
	for _, ip := range ips {
		if ip.String() == want {
			return true
		}
	}
	return false
}

package e2ejoin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/test/support/testenv"
)

// TestBootstrapTokenRefused: a wrong or expired token is refused by the API server; the agent
// says so, naming --bootstrap-kubeconfig, retries with back-off, and joins once the operator
// puts a valid token in the file.
func TestBootstrapTokenRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, token string }{
		{"wrong", "abcdef.0123456789abcdef"},
		{"expired", env.BootstrapToken(t, testenv.BootstrapTokenOptions{Expiration: time.Now().Add(-time.Minute)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := startJoining(t, "refused-"+tc.name, tc.token)
			const refused = "the API server refused the credentials of --bootstrap-kubeconfig"
			require.Eventually(t, func() bool {
				return strings.Count(j.log(), refused) >= 2
			}, 30*time.Second, 200*time.Millisecond, "two refused attempts logged")
			select {
			case <-j.Exited():
				t.Fatalf("the agent gave up instead of retrying:\n%s", j.log())
			default:
			}
			_, err := os.Stat(filepath.Join(j.certDir, "kubelet-client-current.pem"))
			assert.True(t, os.IsNotExist(err), "no certificate yet: %v", err)

			j.writeBootstrapKubeconfig(t, env.BootstrapToken(t, testenv.BootstrapTokenOptions{}))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			require.NoError(t, j.WaitReady(ctx), j.log())
			_, err = os.Stat(filepath.Join(j.certDir, "kubelet-client-current.pem"))
			require.NoError(t, err)
		})
	}
}

// TestDeniedRequest: a token whose requests are not approved automatically; the operator denies
// the request. The agent exits with an error that says so, and leaves nothing in --cert-dir.
func TestDeniedRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	token := env.BootstrapToken(t, testenv.BootstrapTokenOptions{Groups: []string{"system:bootstrappers:e2ejoin-manual"}})
	j := startJoining(t, "denied", token)
	var req certificatesv1.CertificateSigningRequest
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		csrs := csrsOf(ctx, c, bootstrapUser(token), certificatesv1.KubeAPIServerClientKubeletSignerName)
		require.Len(c, csrs, 1)
		req = csrs[0]
	}, 30*time.Second, 200*time.Millisecond, "the agent's CSR")
	req.Status.Conditions = append(req.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: "E2EDenial", Message: "not this node",
	})
	_, err := env.Admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, req.Name, &req, metav1.UpdateOptions{})
	require.NoError(t, err)
	select {
	case <-j.Exited():
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent did not exit after its request was denied:\n%s", j.log())
	}
	err = j.Stop(time.Second)
	require.ErrorContains(t, err, "exited with code")
	log := j.log()
	assert.Contains(t, log, "certificate signing request denied: "+req.Name)
	assert.Contains(t, log, "not this node")
	entries, err := os.ReadDir(j.certDir)
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		assert.Empty(t, entries, "--cert-dir after a denial")
	}
	_, err = os.Stat(j.kubeconfig)
	assert.True(t, os.IsNotExist(err), "no --kubeconfig written: %v", err)
}

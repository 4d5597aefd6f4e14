package e2ejoin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// joiningAgent is an agent started with a bootstrap kubeconfig and no node credentials.
type joiningAgent struct {
	*agentproc.Agent
	kubeconfig, bootstrapKubeconfig, certDir string
}

// startJoining starts an agent (mock provider) whose only credential is token, in a bootstrap
// kubeconfig; it is stopped, and its exit checked, when the test ends.
func startJoining(t *testing.T, node, token string, extraArgs ...string) *joiningAgent {
	t.Helper()
	dir := t.TempDir()
	j := &joiningAgent{
		kubeconfig:          filepath.Join(dir, "kubeconfig"),
		bootstrapKubeconfig: filepath.Join(dir, "bootstrap.kubeconfig"),
		certDir:             filepath.Join(dir, "root", "pki"),
	}
	j.writeBootstrapKubeconfig(t, token)
	a, err := agentproc.Start(agentproc.Config{
		Binary: agentBinary, Dir: dir, Node: node,
		Args: append([]string{
			"--kubeconfig", j.kubeconfig, "--bootstrap-kubeconfig", j.bootstrapKubeconfig,
			"--client-ca-file", env.CAFile,
			"--node-status-update-frequency", "2s", "--node-lease-duration-seconds", "4",
			"-v", "2",
		}, extraArgs...),
	})
	require.NoError(t, err)
	j.Agent = a
	t.Cleanup(func() {
		select {
		case <-a.Exited():
			return // the test expected it, or has failed already
		default:
		}
		if err := a.Stop(20 * time.Second); err != nil {
			t.Errorf("stop: %v\n%s", err, j.log())
		}
	})
	return j
}

func (j *joiningAgent) writeBootstrapKubeconfig(t *testing.T, token string) {
	t.Helper()
	require.NoError(t, testenv.WriteKubeconfig(j.bootstrapKubeconfig, env.BootstrapConfig(token)))
}

func (j *joiningAgent) log() string {
	b, _ := os.ReadFile(j.LogPath)
	return string(b)
}

// csrsOf lists the certificate signing requests that user made for signer.
func csrsOf(ctx context.Context, t require.TestingT, user, signer string) []certificatesv1.CertificateSigningRequest {
	list, err := env.Admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	var out []certificatesv1.CertificateSigningRequest
	for _, c := range list.Items {
		if c.Spec.Username == user && c.Spec.SignerName == signer {
			out = append(out, c)
		}
	}
	return out
}

// bootstrapUser is the user a bootstrap token authenticates as.
func bootstrapUser(token string) string {
	return "system:bootstrap:" + strings.SplitN(token, ".", 2)[0]
}

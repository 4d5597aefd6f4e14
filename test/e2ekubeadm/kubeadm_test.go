package e2ekubeadm

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// kubeadm's fixed paths (its constants: --kubeconfig-dir and certificatesDir would move where
// it writes, not the paths inside the manifests).
const (
	kubernetesDir = "/etc/kubernetes"
	manifestDir   = kubernetesDir + "/manifests"
	caFile        = kubernetesDir + "/pki/ca.crt"
	adminConf     = kubernetesDir + "/admin.conf"
	superAdmin    = kubernetesDir + "/super-admin.conf"
	kubeletConf   = kubernetesDir + "/kubelet.conf"
)

// kubeadmTimeout bounds one kubeadm command: the phases that call the API server retry
// within kubeadm's own timeouts, which this is above.
const kubeadmTimeout = 5 * time.Minute

// kubeadmRunner runs kubeadm with a configuration file.
type kubeadmRunner struct {
	path string
	home string // HOME: a temporary directory
}

// run runs kubeadm with args and returns its standard output, failing t with its output when
// it fails. Its environment has no *_proxy variables: kubeadm copies them into every
// manifest, and the API server would then send its webhook calls through a proxy.
func (k kubeadmRunner) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubeadmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, args...)
	cmd.Env = []string{"HOME=" + k.home}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(strings.ToLower(name), "_proxy") && name != "HOME" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("kubeadm %s (%s)", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	require.NoError(t, err, "kubeadm %s:\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}

// kubeadmConfig is the whole configuration the test gives kubeadm: the node's name and
// address, which kubeadm would otherwise take from the hostname and the default route, the
// release (the default, stable-1, is looked up on dl.k8s.io), and a CRI socket, which the
// phases run here record but never dial. apiServerArgs become apiServer.extraArgs. Nothing
// else: the manifests are kubeadm's defaults.
func kubeadmConfig(node string, apiServerArgs map[string]string) string {
	var extra strings.Builder
	if len(apiServerArgs) > 0 {
		extra.WriteString("apiServer:\n  extraArgs:\n")
		for _, name := range slices.Sorted(maps.Keys(apiServerArgs)) {
			fmt.Fprintf(&extra, "  - name: %s\n    value: %q\n", name, apiServerArgs[name])
		}
	}
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: %s
  bindPort: 6443
nodeRegistration:
  name: %s
  criSocket: unix:///var/run/containerd/containerd.sock
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: %s
%s`, nodeIP, node, kubeVersion, extra.String())
}

// writeConfig writes a kubeadm configuration into dir and returns its path.
func writeConfig(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

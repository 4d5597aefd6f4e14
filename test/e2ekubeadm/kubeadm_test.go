package e2ekubeadm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/test/support/kubeadmnode"
)

// kubeadmTimeout bounds one kubeadm command: the phases that call the API server retry
// within kubeadm's own timeouts, which this is above.
const kubeadmTimeout = 5 * time.Minute

// kubeadmRunner runs kubeadm for a test.
type kubeadmRunner struct{ kubeadmnode.Kubeadm }

// run runs kubeadm with args and returns its standard output, failing t with its output when
// it fails.
func (k kubeadmRunner) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubeadmTimeout)
	defer cancel()
	start := time.Now()
	out, err := k.Run(ctx, args...)
	t.Logf("kubeadm %s (%s)", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	require.NoError(t, err)
	return out
}

// writeConfig writes kubeadm's configuration for the node (kubeadmnode.Config), with
// apiServerArgs, into dir and returns its path.
func writeConfig(t *testing.T, dir, name string, apiServerArgs map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte(kubeadmnode.Config(node, nodeIP, apiServerArgs)), 0o600))
	return path
}

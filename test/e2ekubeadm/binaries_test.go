package e2ekubeadm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/test/support/testenv"
)

// pathDir is the first directory of the process provider's default search path
// (/usr/local/sbin:/usr/local/bin:…), where kubeadm's bare command names are found: a tmpfs of
// the test's mount namespace (masks), which each container's namespace copies.
const pathDir = "/usr/local/sbin"

// kubeVersion is the release of the test control plane, kubeadm's and the Makefile's
// KUBE_VERSION: kubeadm writes it into the cluster configuration.
const kubeVersion = "v1.36.3"

// binaries are the programs the test runs, by name.
type binaries struct {
	kubeadm, kubectl string
	// controlPlane are the four commands of kubeadm's manifests, by the name they run as.
	controlPlane map[string]string
}

// findBinaries locates kubeadm and kube-scheduler in kubeadm's cache and the rest in the test
// control plane's, failing t with the make target that builds what is missing.
func findBinaries(t *testing.T) binaries {
	t.Helper()
	testbin, err := testenv.BinDir()
	require.NoError(t, err)
	kubeadmbin, err := kubeadmBinDir()
	require.NoError(t, err)
	b := binaries{
		kubeadm: filepath.Join(kubeadmbin, "kubeadm"),
		kubectl: filepath.Join(testbin, "kubectl"),
		controlPlane: map[string]string{
			"etcd":                    filepath.Join(testbin, "etcd"),
			"kube-apiserver":          filepath.Join(testbin, "kube-apiserver"),
			"kube-controller-manager": filepath.Join(testbin, "kube-controller-manager"),
			"kube-scheduler":          filepath.Join(kubeadmbin, "kube-scheduler"),
		},
	}
	for _, p := range append([]string{b.kubeadm, b.kubectl}, slices.Collect(maps.Values(b.controlPlane))...) {
		target := "make testbin (or set VK_STATIC_TESTBIN)"
		if filepath.Dir(p) == kubeadmbin {
			target = "make kubeadm-testbin (or set VK_STATIC_KUBEADMBIN)"
		}
		fi, err := os.Stat(p)
		require.NoError(t, err, "run %s", target)
		require.True(t, fi.Mode().IsRegular() && fi.Mode()&0o111 != 0, "%s is not an executable file: run %s", p, target)
	}
	return b
}

// kubeadmBinDir is $VK_STATIC_KUBEADMBIN, else the Makefile's KUBEADMBIN: the user cache
// directory keyed by the first 12 hex digits of test/e2ekubeadm/tools/go.sum's SHA-256.
func kubeadmBinDir() (string, error) {
	if dir := os.Getenv("VK_STATIC_KUBEADMBIN"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join("tools", "go.sum")) // go test runs in the package's directory
	if err != nil {
		return "", fmt.Errorf("locate kubeadm's cache: %w (run make kubeadm-testbin, or set VK_STATIC_KUBEADMBIN)", err)
	}
	h := sha256.Sum256(sum)
	return filepath.Join(cache, "vk-static", "kubeadm", kubeVersion+"-"+hex.EncodeToString(h[:])[:12]), nil
}

// linkIntoPath makes the control plane's commands resolve through the containers' search
// path: a link in pathDir for each. It refuses unless pathDir is a tmpfs, so that nothing is
// ever written into the machine's own /usr/local/sbin.
func linkIntoPath(t *testing.T, b binaries) {
	t.Helper()
	var fs unix.Statfs_t
	require.NoError(t, unix.Statfs(pathDir, &fs))
	require.Equal(t, int64(unix.TMPFS_MAGIC), int64(fs.Type), "%s is not the test's tmpfs: not writing there", pathDir)
	for name, target := range b.controlPlane {
		link := filepath.Join(pathDir, name)
		_ = os.Remove(link) // a test run again (-count) links again
		require.NoError(t, os.Symlink(target, link))
	}
}

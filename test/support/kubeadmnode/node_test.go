package kubeadmnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/yaml"

	"github.com/vk-static/vk-static/test/support/netns"
)

func TestConfigNamesTheNodeAndTheRelease(t *testing.T) {
	docs := strings.Split(Config("cp", netns.NodeIP, map[string]string{"event-ttl": "2h0m0s", "a": "b"}), "\n---\n")
	require.Len(t, docs, 2)
	var init struct {
		Kind             string
		LocalAPIEndpoint struct{ AdvertiseAddress string }
		NodeRegistration struct{ Name string }
	}
	require.NoError(t, yaml.Unmarshal([]byte(docs[0]), &init))
	assert.Equal(t, "InitConfiguration", init.Kind)
	assert.Equal(t, "10.213.0.1", init.LocalAPIEndpoint.AdvertiseAddress)
	assert.Equal(t, "cp", init.NodeRegistration.Name)
	var cluster struct {
		Kind              string
		KubernetesVersion string
		APIServer         struct {
			ExtraArgs []struct{ Name, Value string }
		} `json:"apiServer"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(docs[1]), &cluster))
	assert.Equal(t, "ClusterConfiguration", cluster.Kind)
	assert.Equal(t, "v1.36.3", cluster.KubernetesVersion)
	assert.Equal(t, []struct{ Name, Value string }{{"a", "b"}, {"event-ttl", "2h0m0s"}}, cluster.APIServer.ExtraArgs, "in name order")

	assert.NotContains(t, Config("cp", netns.NodeIP, nil), "extraArgs", "no arguments: kubeadm's defaults")
}

// Outside a namespace whose PathDir is a tmpfs, nothing is linked into the machine's
// /usr/local/sbin.
func TestLinkIntoPathRefusesTheMachinesDirectory(t *testing.T) {
	var fs unix.Statfs_t
	if err := unix.Statfs(PathDir, &fs); err == nil && int64(fs.Type) == int64(unix.TMPFS_MAGIC) {
		t.Fatalf("%s is a tmpfs on this machine: the refusal cannot be tested here", PathDir)
	}
	before, _ := os.ReadDir(PathDir) // none when the machine has no such directory
	require.Error(t, LinkIntoPath(Binaries{ControlPlane: map[string]string{"etcd": "/bin/true"}}))
	after, _ := os.ReadDir(PathDir)
	assert.Equal(t, before, after)
}

// kubeadm copies the *_proxy variables into every manifest: Run leaves them out, and gives
// kubeadm the caller's HOME.
func TestKubeadmRunsWithoutProxies(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "kubeadm")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\nenv\n"), 0o755))
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	t.Setenv("no_proxy", "example.invalid")
	t.Setenv("VK_STATIC_KEPT", "yes")
	out, err := Kubeadm{Path: fake, Home: dir}.Run(context.Background(), "version")
	require.NoError(t, err)
	assert.NotContains(t, out, "proxy.invalid")
	assert.NotContains(t, out, "example.invalid")
	assert.Contains(t, out, "HOME="+dir+"\n")
	assert.Contains(t, out, "VK_STATIC_KEPT=yes\n")

	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho out; echo err >&2; exit 3\n"), 0o755))
	_, err = Kubeadm{Path: fake, Home: dir}.Run(context.Background(), "init")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kubeadm init")
	assert.Contains(t, err.Error(), "out\nerr", "the error carries kubeadm's output")
}

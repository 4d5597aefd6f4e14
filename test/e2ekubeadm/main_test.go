package e2ekubeadm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/netns"
)

// nodeIP is the node's address, on lo in the test's network namespace only: kubeadm's API
// server certificate and etcd's URLs name it.
var nodeIP = netns.NodeIP

// binDirEnv names, for the child the parent re-executes in the new namespaces, the directory
// of vk-static and vk-static-supervisor.
const binDirEnv = "VK_STATIC_E2EKUBEADM_BIN"

// masks are the machine's paths the child hides behind a tmpfs of its mount namespace: kubeadm
// writes /etc/kubernetes (certificates, kubeconfigs, manifests) and etcd /var/lib/etcd whatever
// it is told, /usr/local/sbin gets the links through which the containers' bare command names
// resolve, and the agent makes the controller manager's /usr/libexec/kubernetes/… volume.
// Each test mounts them again for itself (freshKubeadmPaths).
var masks = []hostpaths.Tmpfs{
	{Path: "/etc/kubernetes", Mode: 0o755, Size: "64m"},
	// etcd preallocates its write-ahead log in 64 MB segments; 0700 as etcd wants its data
	// directory.
	{Path: "/var/lib/etcd", Mode: 0o700, Size: "1g"},
	{Path: pathDir, Mode: 0o755, Size: "1m"},
	// The controller manager's flex-volume directory, a hostPath of type DirectoryOrCreate in
	// kubeadm's manifest: the agent would otherwise create it on the machine.
	{Path: "/usr/libexec/kubernetes", Mode: 0o755, Size: "1m"},
}

// agentBinary is vk-static built with -race, with vk-static-supervisor beside it.
var agentBinary string

// TestMain builds the agent and runs the tests again in network and mount namespaces of their
// own (test/support/netns), after creating the mount points of masks the machine lacks, which
// it removes once the child has ended. What the child left in its network namespace is killed
// and fails the run.
func TestMain(m *testing.M) {
	os.Exit(netns.RunTests("e2ekubeadm", prepare, func() int { return runChild(m) }))
}

func prepare() ([]string, func(), error) {
	agent, remove, err := agentproc.BuildInTemp(true)
	if err != nil {
		return nil, nil, err
	}
	paths := make([]string, len(masks))
	for i, m := range masks {
		paths[i] = m.Path
	}
	created := hostpaths.MissingDirs(paths)
	return []string{binDirEnv + "=" + filepath.Dir(agent)}, func() {
		remove()
		if err := hostpaths.RemoveDirs(created); err != nil {
			fmt.Fprintln(os.Stderr, "e2ekubeadm: remove the mount points made for the tmpfs masks:", err)
		}
	}, nil
}

// runChild sets up the namespaces it runs in (lo with nodeIP, the tmpfs masks), then runs the
// tests.
func runChild(m *testing.M) int {
	if err := netns.Enter(nodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "e2ekubeadm:", err)
		return 1
	}
	if err := hostpaths.Mask(masks...); err != nil {
		fmt.Fprintln(os.Stderr, "e2ekubeadm:", err)
		return 1
	}
	agentBinary = filepath.Join(os.Getenv(binDirEnv), "vk-static")
	return m.Run()
}

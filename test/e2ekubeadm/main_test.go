package e2ekubeadm

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/kubeadmnode"
	"github.com/vk-static/vk-static/test/support/netns"
)

// nodeIP is the node's address, on lo in the test's network namespace only: kubeadm's API
// server certificate and etcd's URLs name it.
var nodeIP = netns.NodeIP

// binDirEnv names, for the child the parent re-executes in the new namespaces, the directory
// of vk-static and vk-static-supervisor.
const binDirEnv = "VK_STATIC_E2EKUBEADM_BIN"

// agentBinary is vk-static built with -race, with vk-static-supervisor beside it.
var agentBinary string

// TestMain builds the agent and runs the tests again in network and mount namespaces of their
// own (test/support/netns), after creating the mount points of kubeadmnode.Masks the machine lacks, which
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
	created := hostpaths.MissingDirs(hostpaths.Paths(kubeadmnode.Masks))
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
	if err := hostpaths.Mask(kubeadmnode.Masks...); err != nil {
		fmt.Fprintln(os.Stderr, "e2ekubeadm:", err)
		return 1
	}
	agentBinary = filepath.Join(os.Getenv(binDirEnv), "vk-static")
	return m.Run()
}

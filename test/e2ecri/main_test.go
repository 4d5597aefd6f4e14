package e2ecri

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testenv"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// podSubnet is the bridge network's: pods get addresses of it, the bridge (in the test's own
// network namespace) has its first.
var podSubnet = netip.MustParsePrefix("10.244.0.0/24")

// agentEnv names, for the child the parent re-executes in new namespaces, the agent the
// parent built.
const agentEnv = "VK_STATIC_E2ECRI_AGENT"

var (
	env *testenv.Env
	cd  *testcontainerd.Containerd
	// agentBinary is vk-static built with -race for this test run.
	agentBinary string
	// workloadImage is the test workload image in the 127.0.0.1 registry (Cmd pause: pods say
	// the mode in their args); registryHost is that registry's host:port.
	workloadImage, registryHost string
)

// TestMain builds the agent, then runs the tests again in network and mount namespaces of
// their own (test/support/netns): the containerd's bridge network, its pods' veths and portmap's
// rules exist there only, and the machine's network is untouched.
func TestMain(m *testing.M) {
	os.Exit(netns.RunTests("e2ecri", func() ([]string, func(), error) {
		agent, remove, err := agentproc.BuildInTemp(false)
		return []string{agentEnv + "=" + agent}, remove, err
	}, func() int { return runChild(m) }))
}

// runChild sets up the namespaces it runs in, then the registry, control plane and
// containerd (with a bridge network) the tests share, and runs them.
func runChild(m *testing.M) int {
	ctx := context.Background()
	if err := netns.Enter(netns.NodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}
	agentBinary = os.Getenv(agentEnv)

	reg, err := testimage.StartRegistry(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}
	defer reg.Close()
	registryHost = reg.Host()
	img, err := testimage.Build(testimage.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}
	if workloadImage, err = reg.Push(ctx, "test/workload:1", img); err != nil {
		fmt.Fprintln(os.Stderr, "e2ecri:", err)
		return 1
	}

	e, err := testenv.Start(ctx, testenv.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	env = e
	code := testcontainerd.Main(m, &cd, testcontainerd.Options{Bridge: &testcontainerd.Bridge{Subnet: podSubnet}})
	e.Stop(code != 0)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "testenv: control-plane logs kept in %s\n", e.Dir)
	}
	return code
}

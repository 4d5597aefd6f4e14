package e2enetns

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// NodeIP is the agents' address, on lo in the test's network namespace only.
var NodeIP = netns.NodeIP

// binDirEnv names, for the child the parent re-executes in the new network namespace, the
// directory of vk-static and vk-static-supervisor.
const binDirEnv = "VK_STATIC_E2ENETNS_BIN"

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race, with vk-static-supervisor beside it.
	agentBinary string
)

// TestMain builds the agent and runs the tests again in network and mount namespaces of their
// own (test/support/netns). The child (and, through their Pdeathsig, the control plane and
// agents) dies with this process; the namespaces go with the last process in them, and what a
// child that died before its clean-up left there — its agents' containers — is killed and
// fails the run. The mount namespace keeps the tmpfs the agents mount for projected volumes off
// the machine's mounts.
func TestMain(m *testing.M) {
	os.Exit(netns.RunTests("e2enetns", func() ([]string, func(), error) {
		agent, remove, err := agentproc.BuildInTemp(true)
		return []string{binDirEnv + "=" + filepath.Dir(agent)}, remove, err
	}, func() int { return runChild(m) }))
}

// runChild sets up the network namespace it runs in, then runs the tests against a control
// plane started in it.
func runChild(m *testing.M) int {
	if err := netns.Enter(NodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		return 1
	}
	agentBinary = filepath.Join(os.Getenv(binDirEnv), "vk-static")
	return testenv.Main(m, &env)
}

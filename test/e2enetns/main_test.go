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

// Set by the parent for the child it re-executes in the new network namespace.
const (
	binDirEnv  = "VK_STATIC_E2ENETNS_BIN"     // vk-static and vk-static-supervisor
	workDirEnv = "VK_STATIC_E2ENETNS_WORKDIR" // the agents' directories go under it
)

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race, with vk-static-supervisor beside it.
	agentBinary string
	// workDir holds every agent's directory, so that the parent can find their containers.
	workDir string
)

func TestMain(m *testing.M) {
	if netns.InChild() {
		os.Exit(runChild(m))
	}
	os.Exit(runParent())
}

// runParent builds the agent, runs this binary again with the same arguments in a new network
// namespace, and returns its exit code once it and every container process it left are gone.
func runParent() int {
	agent, remove, err := agentproc.BuildInTemp(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		return 1
	}
	defer remove()
	bin := filepath.Dir(agent)
	work, err := os.MkdirTemp("", "vk-static-e2enetns-work-")
	if err == nil {
		defer os.RemoveAll(work)
		err = os.Chmod(work, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	// The namespaces' child (and, through their Pdeathsig, the control plane and agents) dies
	// with this process; the namespaces go with the last process in them. The mount namespace
	// keeps the tmpfs the agents mount for projected volumes off the machine's mounts.
	child, err := netns.Command(os.Args[1:], binDirEnv+"="+bin, workDirEnv+"="+work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code, err := netns.ExitCode(child.Run())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		return 1
	}
	// The child's tests kill their containers; this is the last resort for a child that died
	// before its clean-up.
	killed, err := agentproc.KillContainers(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		code = max(code, 1)
	}
	if len(killed) > 0 {
		fmt.Fprintf(os.Stderr, "e2enetns: killed %d container processes left behind: %v\n", len(killed), killed)
		code = max(code, 1)
	}
	return code
}

// runChild sets up the network namespace it runs in, then runs the tests against a control
// plane started in it.
func runChild(m *testing.M) int {
	if err := netns.Enter(NodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		return 1
	}
	agentBinary = filepath.Join(os.Getenv(binDirEnv), "vk-static")
	workDir = os.Getenv(workDirEnv)
	return testenv.Main(m, &env)
}

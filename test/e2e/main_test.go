package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testenv"
	"github.com/vk-static/vk-static/test/support/testimage"
)

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race for this test run, with vk-static-supervisor
	// beside it, where the agent finds it.
	agentBinary string
	// workloadBinary is test/support/testimage's workload program, for containers that serve HTTP:
	// the process provider runs host commands, and nothing else the tests need (python3) may be
	// assumed installed. API pods run it as nobody.
	workloadBinary string
)

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "vk-static-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if agentBinary, err = agentproc.BuildAgentWithSupervisor(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if workloadBinary, err = testimage.BuildWorkload(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// MkdirTemp made it root's alone; containers running as nobody execute the workload here.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return testenv.Main(m, &env)
}

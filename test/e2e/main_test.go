package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/vk-static/vk-static/internal/agentproc"
	"github.com/vk-static/vk-static/internal/testenv"
)

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race for this test run, with vk-static-supervisor
	// beside it, where the agent finds it.
	agentBinary string
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
	return testenv.Main(m, &env)
}

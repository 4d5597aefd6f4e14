package e2e

import (
	"fmt"
	"os"
	"path/filepath"
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
	agent, remove, err := agentproc.BuildInTemp(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer remove()
	agentBinary = agent
	if workloadBinary, err = testimage.BuildWorkload(filepath.Dir(agent)); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return testenv.Main(m, &env)
}

package e2ejoin

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testenv"
)

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race for this run.
	agentBinary string
)

// signingDuration is short so that client certificates rotate within about a minute of issue:
// the signer back-dates notBefore by five minutes, and rotation comes at 70–90 % of the
// certificate's lifetime on paper.
const signingDuration = 2 * time.Minute

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	agent, remove, err := agentproc.BuildInTemp(false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ejoin:", err)
		return 1
	}
	defer remove()
	agentBinary = agent
	return testenv.Main(m, &env, testenv.Options{
		ControllerManager: &testenv.ControllerManagerOptions{SigningDuration: signingDuration},
	})
}

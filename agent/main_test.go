package agent_test

import (
	"os"
	"testing"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// env is the package's control plane: the example runs against a real API server, under the
// Node authorizer and NodeRestriction, with the node's own identity.
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// built is the factory of a provider the test has already made.
func built(p agent.Provider) agent.NewProviderFunc {
	return func(agent.ProviderConfig) (agent.Provider, error) { return p, nil }
}

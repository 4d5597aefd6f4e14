package agent_test

import (
	"os"
	"testing"

	"github.com/vk-static/vk-static/test/support/testenv"
)

// env is the package's control plane: the example runs against a real API server, under the
// Node authorizer and NodeRestriction, with the node's own identity.
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

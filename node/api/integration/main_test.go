package integration

import (
	"os"
	"testing"

	"github.com/vk-static/vk-static/test/support/testenv"
)

// env is the package's control plane, shared by its tests.
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

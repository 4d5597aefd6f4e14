package node

import (
	"os"
	"testing"

	"github.com/vk-static/vk-static/internal/testenv"
)

// env is the package's control plane for integration tests (unit tests ignore it).
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vk-static/vk-static/internal/testenv"
)

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race for this test run.
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
	agentBinary = filepath.Join(dir, "vk-static")
	build := exec.Command("go", "build", "-race", "-o", agentBinary, "github.com/vk-static/vk-static/cmd/vk-static")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building vk-static:", err)
		return 1
	}
	return testenv.Main(m, &env)
}

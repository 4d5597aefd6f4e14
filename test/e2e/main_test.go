package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
	agentBinary = filepath.Join(dir, "vk-static")
	// The supervisor is built as make build builds it, without -race (which needs cgo): it is
	// what keeps each container's cost small, and its code runs under the race detector in
	// provider/process's tests (whose supervisors are the race-enabled test binary re-executed).
	for _, b := range []struct {
		args []string
		env  []string
	}{
		{args: []string{"build", "-race", "-o", agentBinary, "github.com/vk-static/vk-static/cmd/vk-static"}},
		{args: []string{"build", "-o", filepath.Join(dir, "vk-static-supervisor"), "github.com/vk-static/vk-static/cmd/vk-static-supervisor"}, env: []string{"CGO_ENABLED=0"}},
	} {
		build := exec.Command("go", b.args...)
		build.Env = append(os.Environ(), b.env...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: go", strings.Join(b.args, " ")+":", err)
			return 1
		}
	}
	return testenv.Main(m, &env)
}

package agentproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildAgent builds the vk-static binary with the race detector into dir, for an end-to-end
// test package's TestMain, and returns its path; the go tool's output goes to stderr.
func BuildAgent(dir string) (string, error) {
	binary := filepath.Join(dir, "vk-static")
	build := exec.Command("go", "build", "-race", "-o", binary, "github.com/vk-static/vk-static/cmd/vk-static")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build vk-static: %w", err)
	}
	return binary, nil
}

package agentproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildTags are the tags every vk-static binary is built with, here and by the Makefile's
// BUILD_TAGS. grpcnotrace leaves gRPC's x/net/trace out: its html/template calls methods by
// names known only at run time, which makes the linker keep every exported method of every
// type in the binary — 30 MB of the 88 MB agent, and about 10 MB of its resident memory
// (docs/performance.md, "The binary").
const BuildTags = "grpcnotrace"

// BuildAgent builds the vk-static binary with the race detector into dir, for an end-to-end
// test package's TestMain, and returns its path; the go tool's output goes to stderr.
//
// The race detector needs cgo, which make build leaves out; netgo and osusergo keep the two
// things cgo would change, net's resolver and os/user's lookups, the pure-Go ones the
// released binary runs, so that the agent under test resolves and looks up as it does.
func BuildAgent(dir string) (string, error) {
	binary := filepath.Join(dir, "vk-static")
	return binary, goBuild(nil, "-race", "-tags", BuildTags+",netgo,osusergo", "-o", binary, "github.com/vk-static/vk-static/cmd/vk-static")
}

// buildSupervisor builds vk-static-supervisor into dir as make build does: without cgo (and so
// without the race detector), a static binary that each container starts without the dynamic
// loader. Its code runs under the race detector in runtime/process's tests, whose supervisors
// are the race-enabled test binary re-executed. The agent finds it beside its own binary.
func buildSupervisor(dir string) error {
	return goBuild([]string{"CGO_ENABLED=0"}, "-tags", BuildTags, "-o", filepath.Join(dir, "vk-static-supervisor"), "github.com/vk-static/vk-static/cmd/vk-static-supervisor")
}

// BuildAgentWithSupervisor builds both into dir, as an end-to-end package whose agents run
// real containers (the process provider) needs them, and returns the agent's path.
func BuildAgentWithSupervisor(dir string) (string, error) {
	agent, err := BuildAgent(dir)
	if err != nil {
		return "", err
	}
	return agent, buildSupervisor(dir)
}

// PodVisibleTempDirs is where tests make the directories that a process-provider agent's pods
// must see, such as the programs they run: not /tmp or /var/tmp, which an API pod has empty ones
// of its own over, and a tmpfs on most hosts, emptied at boot.
const PodVisibleTempDirs = "/run"

// BuildInTemp builds the agent — with vk-static-supervisor beside it when withSupervisor — into
// a new temporary directory under PodVisibleTempDirs, for a test package's TestMain, and returns
// the agent's path and a function that removes the directory. The directory is readable by all:
// containers running as nobody execute what a test puts there.
func BuildInTemp(withSupervisor bool) (agent string, remove func(), err error) {
	dir, err := os.MkdirTemp(PodVisibleTempDirs, "vk-static-bin-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	build := BuildAgent
	if withSupervisor {
		build = BuildAgentWithSupervisor
	}
	if err := os.Chmod(dir, 0o755); err != nil { // MkdirTemp made it its owner's alone
		remove()
		return "", nil, err
	}
	if agent, err = build(dir); err != nil {
		remove()
		return "", nil, err
	}
	return agent, remove, nil
}

func goBuild(env []string, args ...string) error {
	build := exec.Command("go", append([]string{"build"}, args...)...)
	build.Env = append(os.Environ(), env...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

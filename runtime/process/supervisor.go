package process

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vk-static/vk-static/runtime/process/supervisor"
)

// RunSupervisorIfRequested runs this process as a container's supervisor and exits, when the
// runtime started it as one (the environment names the container's state directory); otherwise
// it returns at once. Call it first thing in main(), and in TestMain of every test package that
// starts containers without Config.SupervisorPath — before flags are parsed or goroutines
// started: without a SupervisorPath, the supervisor is the agent binary re-executed.
func RunSupervisorIfRequested() {
	supervisor.RunInitIfRequested()   // a workload on its way into its cgroup
	supervisor.RunHolderIfRequested() // a pod's namespace holder
	if dir, ok := supervisor.Requested(); ok {
		os.Exit(supervisor.Run(dir))
	}
}

// reexecSelf is the supervisor binary without Config.SupervisorPath: the running agent's own
// (the same build, even when the file was replaced since it started).
const reexecSelf = "/proc/self/exe"

// supervisorBinary resolves Config.SupervisorPath: an absolute path to an executable file, or
// reexecSelf when it is empty.
func supervisorBinary(path string) (string, error) {
	if path == "" {
		return reexecSelf, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("supervisor %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("supervisor: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("supervisor %s is not an executable file", abs)
	}
	return abs, nil
}

package app

import (
	"os"
	"path/filepath"
)

// supervisorBinaryName is the process provider's container supervisor
// (cmd/vk-static-supervisor), installed beside the agent.
const supervisorBinaryName = "vk-static-supervisor"

// supervisorBeside returns the supervisor binary in the directory of the agent's executable
// exe, or "" when there is none there: the process runtime then re-executes the agent itself
// (main calls process.RunSupervisorIfRequested for that), which works but costs each container
// the agent's start-up and memory.
func supervisorBeside(exe string) string {
	if exe == "" {
		return ""
	}
	path := filepath.Join(filepath.Dir(exe), supervisorBinaryName)
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vk-static/vk-static/lifecycle"
)

// The records under the state directory, one JSON file each, written atomically (temp file and
// rename) so that a reader — another agent, the supervisor, an agent restarted mid-write — sees
// the old or the new record, never part of one.
const (
	sandboxesDir      = "sandboxes"
	containersDir     = "containers"
	sandboxFile       = "sandbox.json"
	containerFile     = "config.json"
	stateFile         = "state.json"
	socketFile        = "sock"
	supervisorLogFile = "supervisor.log"
	supervisorEnvName = "VK_STATIC_SUPERVISOR"
)

// sandboxRecord is sandbox.json.
type sandboxRecord struct {
	ID        string                  `json:"id"`
	Config    lifecycle.SandboxConfig `json:"config"`
	CreatedAt time.Time               `json:"createdAt"`
	Stopped   bool                    `json:"stopped,omitempty"`
}

// containerRecord is config.json, written by CreateContainer and read by the supervisor: what to
// run, decided once.
type containerRecord struct {
	ID        string                    `json:"id"`
	SandboxID string                    `json:"sandboxId"`
	CreatedAt time.Time                 `json:"createdAt"`
	Config    lifecycle.ContainerConfig `json:"config"`
	// User is who the workload runs as: the config's user, else the runtime's default.
	User lifecycle.User `json:"user"`
	// SetCredentials is false when the agent is not root: the workload keeps the agent's ids.
	SetCredentials bool  `json:"setCredentials"`
	LogMaxSize     int64 `json:"logMaxSize,omitempty"`
	LogMaxFiles    int   `json:"logMaxFiles,omitempty"`
}

// runState is where a started container is.
type runState string

const (
	stateRunning runState = "running"
	stateExited  runState = "exited"
)

// stateRecord is state.json, written by the supervisor (and by the runtime only for a
// supervisor that died without writing the end). A container without it has not been started.
type stateRecord struct {
	State runState `json:"state"`
	// SupervisorPID and Pid are process ids; PidStartTime is the workload's start time in clock
	// ticks since boot (/proc/<pid>/stat field 22), which tells the workload from a later
	// process that reuses its pid.
	SupervisorPID int    `json:"supervisorPid,omitempty"`
	Pid           int    `json:"pid,omitempty"`
	PidStartTime  uint64 `json:"pidStartTime,omitempty"`

	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	ExitCode   int32     `json:"exitCode"`
	Reason     string    `json:"reason,omitempty"`
	Message    string    `json:"message,omitempty"`
}

// Reasons this runtime gives for an exit, beyond the exit code.
const (
	// ReasonStartError: the command could not be started (as CRI's).
	ReasonStartError = "StartError"
	// ReasonSupervisorLost: the supervisor ended without recording the workload's end (it was
	// killed); the workload's processes, if still there, were killed.
	ReasonSupervisorLost = "SupervisorLost"
)

// startErrorExitCode is the exit code of a container whose command could not be started: the
// shell's and runc's 128 (CRI runtimes report it so).
const startErrorExitCode = 128

// supervisorLostExitCode is the exit code of a container whose supervisor vanished: nothing
// recorded the real one; containerd reports a lost shim's tasks with 255 too.
const supervisorLostExitCode = 255

func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readState reads a container's state.json; a missing file is (nil, nil): never started.
func readState(dir string) (*stateRecord, error) {
	var st stateRecord
	err := readJSON(filepath.Join(dir, stateFile), &st)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &st, nil
}

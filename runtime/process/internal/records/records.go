package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vk-static/vk-static/internal/atomicfile"
)

// The files of a container's directory that both sides use. The runtime's own records (the
// sandbox's, the layout of the state directory) are the runtime's business.
const (
	// ContainerFile is config.json: what to run, written by the runtime at CreateContainer.
	ContainerFile = "config.json"
	// StateFile is state.json: the start and the end, written by the supervisor.
	StateFile = "state.json"
	// SocketFile is the supervisor's socket (package protocol).
	SocketFile = "sock"
	// SupervisorLogFile is the supervisor's own stderr, where a crash leaves its reason.
	SupervisorLogFile = "supervisor.log"
)

// Workload is the part of config.json the supervisor reads: what to run and how. The runtime
// writes the whole record (with lifecycle's ContainerConfig as "config"); the field names here
// are that record's, so that either side decodes what the other wrote, whichever binary wrote it.
type Workload struct {
	Config WorkloadConfig `json:"config"`
	// User is who the workload runs as: the config's user, else the runtime's default.
	User User `json:"user"`
	// SetCredentials is false when the agent is not root: the workload keeps the agent's ids.
	SetCredentials bool  `json:"setCredentials"`
	LogMaxSize     int64 `json:"logMaxSize,omitempty"`
	LogMaxFiles    int   `json:"logMaxFiles,omitempty"`
	// Cgroups are the directories of the container's cgroup (one per v1 hierarchy, one on v2),
	// which the workload and its execs join before they are executed; none without cgroups.
	Cgroups map[string]string `json:"cgroups,omitempty"`
	// Sandbox is the isolation the workload and its execs run in; zero for a trusted static pod,
	// which sees the host as its manifest's author does.
	Sandbox Sandbox `json:"sandbox,omitzero"`
}

// Sandbox is what keeps a container from gaining more than its user has and from reaching
// into other pods or the node agent: the kernel features a container runtime builds a
// container's root filesystem and namespaces from, applied to a view of the host.
type Sandbox struct {
	// NoNewPrivs sets no_new_privs: exec never gains privileges (setuid and setgid bits, file
	// capabilities). Set for every restricted container, and for allowPrivilegeEscalation:
	// false in any pod.
	NoNewPrivs bool `json:"noNewPrivs,omitempty"`
	// Restricted hardens the container's view of the host: every mount nosuid and nodev, a
	// /dev of its own with only the standard devices, Masked hidden, and a /proc of its PID
	// namespace.
	Restricted bool `json:"restricted,omitempty"`
	// Masked are host paths hidden behind empty read-only mounts (the agent's state, its
	// credentials, other node agents' state).
	Masked []string `json:"masked,omitempty"`
	// Holder is the pod's namespace holder, whose namespaces the container joins as Join says.
	Holder *Holder `json:"holder,omitempty"`
	// JoinPID, JoinIPC, JoinUTS and JoinNet say which of the holder's namespaces the container
	// joins.
	// A restricted container that does not join the holder's PID namespace gets one of its own
	// (the workload is its PID 1), unless HostPID.
	JoinPID bool `json:"joinPid,omitempty"`
	JoinIPC bool `json:"joinIpc,omitempty"`
	JoinUTS bool `json:"joinUts,omitempty"`
	// JoinNet joins the holder's network namespace: the pod's, on the node's pod network.
	JoinNet bool `json:"joinNet,omitempty"`
	HostPID bool `json:"hostPid,omitempty"`
}

// IsZero reports whether s asks for nothing: the container sees the host as it is.
func (s *Sandbox) IsZero() bool {
	return !s.NoNewPrivs && !s.Restricted && s.Holder == nil
}

// Holder identifies a pod's namespace holder process: its pid and start time (which tells it
// from a later process with the same pid).
type Holder struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// WorkloadConfig is what the supervisor uses of lifecycle.ContainerConfig, under its (untagged)
// field names.
type WorkloadConfig struct {
	Command    []string
	Args       []string
	Env        []string
	WorkingDir string
	Mounts     []Mount
	Stdin      bool
	StdinOnce  bool
	TTY        bool
	LogPath    string
}

// Argv is the workload's command line: Command then Args.
func (c *WorkloadConfig) Argv() []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}

// User is lifecycle.User: numeric ids.
type User struct {
	UID                int64
	GID                int64
	SupplementalGroups []int64
}

// Mount is lifecycle.Mount: a host path bind-mounted over a container path.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// RunState is where a started container is.
type RunState string

const (
	StateRunning RunState = "running"
	StateExited  RunState = "exited"
)

// State is state.json, written by the supervisor (and by the runtime only for a supervisor
// that died without writing the end). A container without it has not been started.
type State struct {
	State RunState `json:"state"`
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

// Reasons for an exit, beyond the exit code.
const (
	// ReasonStartError: the command could not be started (as CRI's).
	ReasonStartError = "StartError"
	// ReasonSupervisorLost: the supervisor ended without recording the workload's end (it was
	// killed); the workload's processes, if still there, were killed.
	ReasonSupervisorLost = "SupervisorLost"
)

// StartErrorExitCode is the exit code of a container whose command could not be started: the
// shell's and runc's 128 (CRI runtimes report it so).
const StartErrorExitCode = 128

// SupervisorLostExitCode is the exit code of a container whose supervisor vanished: nothing
// recorded the real one; containerd reports a lost shim's tasks with 255 too.
const SupervisorLostExitCode = 255

// WriteJSONAtomic writes v as indented JSON to path through a synced temporary file, a rename
// and a synced directory (atomicfile.WriteFile): a crash leaves the old record or the new one,
// never an empty one.
func WriteJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'), 0o600)
}

// WriteJSONNew writes v as the first record at path, in a directory just made for it: through
// a synced temporary file and a rename, as WriteJSONAtomic, but without syncing the directory.
// The record is whole wherever it is seen (its data reached the disk before its name did), but
// a power cut before the directory's next sync may lose its name: the caller must treat a
// directory without its record as one never made (the process runtime removes it at start).
// What it saves is one directory sync per record on a container's start path; see the callers
// for why each can be lost.
func WriteJSONNew(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFileNoDirSync(path, append(data, '\n'), 0o600)
}

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadState reads the state.json of the container directory dir; a missing file is (nil, nil):
// never started.
func ReadState(dir string) (*State, error) {
	var st State
	err := ReadJSON(filepath.Join(dir, StateFile), &st)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &st, nil
}

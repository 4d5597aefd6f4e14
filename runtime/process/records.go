package process

import (
	"time"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/cgroup"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// The runtime's records under the state directory, one JSON file each, written atomically
// (records.WriteJSONAtomic). A container's directory holds the files package records names.
const (
	sandboxesDir  = "sandboxes"
	containersDir = "containers"
	sandboxFile   = "sandbox.json"
)

// sandboxRecord is sandbox.json.
type sandboxRecord struct {
	ID        string                  `json:"id"`
	Config    lifecycle.SandboxConfig `json:"config"`
	CreatedAt time.Time               `json:"createdAt"`
	Stopped   bool                    `json:"stopped,omitempty"`
	// Cgroups is the pod's cgroup (package cgroup); none without cgroups.
	Cgroups cgroup.Paths `json:"cgroups,omitempty"`
	// Holder is a restricted pod's namespace holder; nil for other pods.
	Holder *records.Holder `json:"holder,omitempty"`
	// Network says the holder's network namespace is on the pod network (CNI ADD done, DEL
	// still to do at the stop); IPs are the pod's addresses there.
	Network bool     `json:"network,omitempty"`
	IPs     []string `json:"ips,omitempty"`
	// ResolvConf says the sandbox's directory holds the resolver configuration its containers
	// see as /etc/resolv.conf (a record of an agent before it: Network says it).
	ResolvConf bool `json:"resolvConf,omitempty"`
}

// containerRecord is config.json, written by CreateContainer: what to run, decided once. The
// supervisor reads it as records.Workload, which must keep decoding it (TestWorkloadRecord).
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
	// Cgroups is the container's cgroup, which its workload and execs join
	// (records.Workload.Cgroups); none without cgroups.
	Cgroups cgroup.Paths `json:"cgroups,omitempty"`
	// Sandbox is the container's isolation (records.Workload.Sandbox).
	Sandbox records.Sandbox `json:"sandbox,omitzero"`
}

// Reasons this runtime gives for an exit, beyond the exit code.
const (
	// ReasonStartError: the command could not be started (as CRI's).
	ReasonStartError = records.ReasonStartError
	// ReasonSupervisorLost: the supervisor ended without recording the workload's end (it was
	// killed); the workload's processes, if still there, were killed.
	ReasonSupervisorLost = records.ReasonSupervisorLost
)

package protocol

import (
	"bufio"
	"encoding/json"
	"io"
)

// How the runtime starts a supervisor: with EnvName=<container dir> as its environment (and
// Arg0 as its argv[0], the container's id after it), stdin and stdout on /dev/null, stderr on
// records.SupervisorLogFile, and a socketpair on ReportFd.
const (
	EnvName = "VK_STATIC_SUPERVISOR"
	Arg0    = "vk-static-supervisor"
)

// InitArg0 is the argv[0] of a supervisor binary re-executed as the init helper of a workload
// in a cgroup ([github.com/vk-static/vk-static/runtime/process/supervisor.RunInitIfRequested]), its
// JSON spec after it. It is not EnvName: the helper's environment is the workload's.
const InitArg0 = "vk-static-init"

// HolderArg0 is the argv[0] of a supervisor binary started as a pod's namespace holder
// ([github.com/vk-static/vk-static/runtime/process/supervisor.RunHolderIfRequested]): HolderStart,
// the pod's hostname and HolderOwnNetwork or HolderHostNetwork after it, starts the holder and
// prints a HolderReport on stdout; HolderRun, with the same arguments, is the holder itself.
const (
	HolderArg0        = "vk-static-pod"
	HolderStart       = "start"
	HolderRun         = "run"
	HolderOwnNetwork  = "own-network"
	HolderHostNetwork = "host-network"
)

// HolderReport is what starting a holder prints: the holder's pid and start time.
type HolderReport struct {
	Pid          int    `json:"pid"`
	PidStartTime uint64 `json:"pidStartTime"`
}

// ReportFd is the descriptor on which the runtime hears of the start (one JSON StartReport
// line) and which then stays open as its watch connection: a socketpair, so that there is no
// moment between the start and the runtime's watch at which an exit could go unseen.
const ReportFd = 3

// StartReport is the supervisor's first line on ReportFd: the workload's pid and start time,
// or why it could not be started.
type StartReport struct {
	Pid          int    `json:"pid,omitempty"`
	PidStartTime uint64 `json:"pidStartTime,omitempty"`
	Error        string `json:"error,omitempty"`
}

// WriteStartReport is the supervisor's side: one line.
func WriteStartReport(w io.Writer, rep StartReport) error {
	line, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// ReadStartReport reads the supervisor's first line on the report connection.
func ReadStartReport(r *bufio.Reader) (StartReport, error) {
	var rep StartReport
	line, err := r.ReadBytes('\n')
	if err != nil {
		return rep, err
	}
	return rep, json.Unmarshal(line, &rep)
}

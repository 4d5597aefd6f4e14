package agentproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// supervisorEnv is the variable a process provider supervisor is started with: its container's
// directory under <root-dir>/process/containers/.
const supervisorEnv = "VK_STATIC_SUPERVISOR"

// ContainerProcess is a process that runs for a container of an agent with --provider
// process: a supervisor, a workload, or anything in their sessions.
type ContainerProcess struct {
	Pid     int
	Session int
	Command string // /proc/<pid>/cmdline, arguments joined by spaces
}

func (p ContainerProcess) String() string {
	return fmt.Sprintf("pid %d (session %d): %s", p.Pid, p.Session, p.Command)
}

// ContainerProcesses lists the processes that run for the containers of agents whose Dir is
// under dir: each supervisor (its environment names a container directory under dir), each
// workload a state.json under dir records (with the start time it records, so that a reused
// pid is not taken for it), and every process in their sessions — supervisors and workloads
// each lead a session of their own, and a container's children stay in it. Container
// processes outlive the agent; this is how a test finds what it left.
func ContainerProcesses(dir string) ([]ContainerProcess, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	procs, err := allProcesses()
	if err != nil {
		return nil, err
	}
	leaders := map[int]bool{}
	for _, p := range procs {
		if under(supervisorDir(p.pid), dir) {
			leaders[p.pid] = true
		}
	}
	for _, w := range recordedWorkloads(dir) {
		if p, ok := procs[w.Pid]; ok && p.startTime == w.PidStartTime {
			leaders[w.Pid] = true
		}
	}
	// A supervisor's children (the workload, exec'd commands) lead sessions of their own.
	for _, p := range procs {
		if leaders[p.ppid] {
			leaders[p.pid] = true
		}
	}
	var out []ContainerProcess
	for _, p := range procs {
		if leaders[p.pid] || leaders[p.session] {
			out = append(out, ContainerProcess{Pid: p.pid, Session: p.session, Command: cmdline(p.pid)})
		}
	}
	return out, nil
}

// KillContainers kills (SIGKILL) every process ContainerProcesses finds under dir, and their
// process groups, until none is left or 10 seconds have passed; it returns what it found. Stop
// the agents first: a running agent restarts what is killed.
func KillContainers(dir string) ([]ContainerProcess, error) {
	var found []ContainerProcess
	seen := map[int]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs, err := ContainerProcesses(dir)
		if err != nil {
			return found, err
		}
		if len(procs) == 0 {
			return found, nil
		}
		if time.Now().After(deadline) {
			return found, fmt.Errorf("container processes under %s survive SIGKILL: %v", dir, procs)
		}
		for _, p := range procs {
			if !seen[p.Pid] {
				seen[p.Pid] = true
				found = append(found, p)
			}
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL) // its process group, if it leads one
			_ = syscall.Kill(p.Pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond) // a poll: killed processes take a moment to be reaped
	}
}

type procInfo struct {
	pid, ppid, session int
	startTime          uint64
}

// allProcesses reads /proc/<pid>/stat of every process; zombies are left out (they have ended).
func allProcesses() (map[int]procInfo, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := map[int]procInfo{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// The command (field 2) is in parentheses and may hold anything: fields after the last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		session, _ := strconv.Atoi(f[3])
		start, _ := strconv.ParseUint(f[19], 10, 64)
		out[pid] = procInfo{pid: pid, ppid: ppid, session: session, startTime: start}
	}
	return out, nil
}

// supervisorDir is the container directory in pid's environment, "" for other processes.
func supervisorDir(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return ""
	}
	for kv := range bytes.SplitSeq(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(supervisorEnv+"=")); ok {
			return string(v)
		}
	}
	return ""
}

func under(path, dir string) bool {
	return path != "" && (path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)))
}

func cmdline(pid int) string {
	data, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.TrimSpace(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '})))
}

// Workload is a container's process as its supervisor recorded it in state.json.
type Workload struct {
	// StateFile is the state.json the record came from.
	StateFile string `json:"-"`
	State     string `json:"state"`
	Pid       int    `json:"pid"`
	// PidStartTime is the process's start time, /proc/<pid>/stat field 22.
	PidStartTime uint64 `json:"pidStartTime"`
}

// Running reports whether the recorded process still runs: pid exists, is no zombie, and
// started when the record says.
func (w Workload) Running() bool {
	procs, err := allProcesses()
	if err != nil {
		return false
	}
	p, ok := procs[w.Pid]
	return ok && w.Pid > 0 && p.startTime == w.PidStartTime
}

// Workloads reads every container state record (<root-dir>/process/containers/*/state.json)
// of the agents whose Dir is under dir.
func Workloads(dir string) ([]Workload, error) {
	var out []Workload
	var errs []error
	for _, path := range stateFiles(dir) {
		data, err := os.ReadFile(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		w := Workload{StateFile: path}
		if err := json.Unmarshal(data, &w); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		out = append(out, w)
	}
	return out, errors.Join(errs...)
}

func recordedWorkloads(dir string) []Workload {
	ws, _ := Workloads(dir)
	return ws
}

// stateFiles finds state.json files of the process provider under dir: an agent's own
// (dir/root/process/...) or those of agents in subdirectories of dir.
func stateFiles(dir string) []string {
	var out []string
	for _, pattern := range []string{
		filepath.Join(dir, "root", "process", "containers", "*", "state.json"),
		filepath.Join(dir, "*", "root", "process", "containers", "*", "state.json"),
	} {
		m, _ := filepath.Glob(pattern)
		out = append(out, m...)
	}
	return out
}

// ContainerWorkload reads the state record of one container of the agent whose Dir is dir;
// containerID is the status' containerID (process://<id>) or the bare id.
func ContainerWorkload(dir, containerID string) (Workload, error) {
	id := containerID
	if _, after, ok := strings.Cut(containerID, "://"); ok {
		id = after
	}
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return Workload{}, fmt.Errorf("bad container ID %q", containerID)
	}
	path := filepath.Join(dir, "root", "process", "containers", id, "state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return Workload{}, err
	}
	w := Workload{StateFile: path}
	if err := json.Unmarshal(data, &w); err != nil {
		return Workload{}, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

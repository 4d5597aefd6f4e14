package agentproc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// Containers are the processes that run for the containers of the agents under a directory,
// by role: the supervisors and the workloads themselves (ContainerProcesses adds what runs in
// their sessions).
type Containers struct {
	// Supervisors are the live processes whose VK_STATIC_SUPERVISOR names a container directory
	// under the directory, by pid, with that container directory. They are found by their
	// environment, not by the state records, so that one that has not written its record yet
	// is found too.
	Supervisors map[int]string
	// Workloads are the live processes a state record names — its pid, started at the time it
	// records — by pid, with that record.
	Workloads map[int]Workload
	// Records are every state record read. A container that is removed takes its record with
	// it: keep these and pass them as known to a later FindContainers to still find the
	// workloads they name.
	Records []Workload
}

// FindContainers finds the supervisors and workloads of the containers of the agents whose Dir
// is under dir (see Workloads for where their records are), and the workloads that known (records
// read before) name. A record that cannot be read is in the error, which comes with all the
// rest that was found.
func FindContainers(dir string, known []Workload) (Containers, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Containers{}, err
	}
	procs, err := allProcesses()
	if err != nil {
		return Containers{}, err
	}
	return findContainers(dir, known, procs)
}

// findContainers is FindContainers on procs, under dir (absolute).
func findContainers(dir string, known []Workload, procs map[int]procInfo) (Containers, error) {
	records, err := Workloads(dir)
	c := Containers{Supervisors: map[int]string{}, Workloads: map[int]Workload{}, Records: records}
	recorded := map[int]Workload{}
	for _, w := range slices.Concat(known, records) { // what is recorded now wins
		recorded[w.Pid] = w
	}
	for pid, p := range procs {
		if d := supervisorDir(pid); under(d, dir) {
			c.Supervisors[pid] = d
			continue
		}
		if w, ok := recorded[pid]; ok && w.is(p) {
			c.Workloads[pid] = w
		}
	}
	return c, err
}

// Len is how many supervisors and workloads there are.
func (c Containers) Len() int { return len(c.Supervisors) + len(c.Workloads) }

// String lists the processes by pid, each with its role and container ID:
// "supervisor 41 (c1), workload 43 (c1)".
func (c Containers) String() string {
	var parts []string
	for _, pid := range slices.Sorted(maps.Keys(c.Supervisors)) {
		parts = append(parts, fmt.Sprintf("supervisor %d (%s)", pid, filepath.Base(c.Supervisors[pid])))
	}
	for _, pid := range slices.Sorted(maps.Keys(c.Workloads)) {
		parts = append(parts, fmt.Sprintf("workload %d (%s)", pid, filepath.Base(c.Workloads[pid].ContainerDir())))
	}
	return strings.Join(parts, ", ")
}

// ContainerProcesses lists the processes that run for the containers of agents whose Dir is
// under dir: each supervisor and each workload FindContainers finds, and every process in their
// sessions — supervisors and workloads each lead a session of their own, and a container's
// children stay in it. Container processes outlive the agent; this is how a test finds what it
// left. known are records read before, as for FindContainers. A state.json that cannot be read
// names no workload here (its supervisor, if alive, is still found by its environment).
func ContainerProcesses(dir string, known ...Workload) ([]ContainerProcess, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	procs, err := allProcesses()
	if err != nil {
		return nil, err
	}
	c, _ := findContainers(dir, known, procs)
	leaders := map[int]bool{}
	for pid := range c.Supervisors {
		leaders[pid] = true
	}
	for pid := range c.Workloads {
		leaders[pid] = true
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

// KillContainers kills (SIGKILL) every process ContainerProcesses finds under dir (and through
// known), and their process groups, until none is left or 10 seconds have passed; it returns
// what it found. Stop the agents first: a running agent restarts what is killed.
func KillContainers(dir string, known ...Workload) ([]ContainerProcess, error) {
	var found []ContainerProcess
	seen := map[int]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs, err := ContainerProcesses(dir, known...)
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
		if p, alive := parseStat(pid, string(data)); alive {
			out[pid] = p
		}
	}
	return out, nil
}

// parseStat reads parent, session and start time (fields 4, 6 and 22) of a /proc/<pid>/stat
// line, and whether the process is alive: its state (field 3) is not Z or X, and the line is
// whole. Fields are counted from the last ')': the command (field 2) may hold anything.
func parseStat(pid int, stat string) (procInfo, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	session, err2 := strconv.Atoi(f[3])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, session: session, startTime: start}, true
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
	return ok && w.is(p)
}

// is reports whether p is the recorded process: the same pid and start time, so that a pid
// the kernel has given to another process since is not taken for the workload.
func (w Workload) is(p procInfo) bool {
	return w.Pid > 0 && p.pid == w.Pid && p.startTime == w.PidStartTime
}

// ContainerDir is the directory of the container the record is of, named by the container ID.
func (w Workload) ContainerDir() string { return filepath.Dir(w.StateFile) }

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

package bench

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
)

// supervisorEnv names the container directory in a process provider supervisor's environment
// (provider/process/doc.go).
const supervisorEnv = "VK_STATIC_SUPERVISOR"

// containerState is what the harness reads of a container's state.json, written by its
// supervisor (provider/process/internal/records).
type containerState struct {
	Dir           string `json:"-"` // the container's directory
	State         string `json:"state"`
	SupervisorPID int    `json:"supervisorPid"`
	Pid           int    `json:"pid"`
	// PidStartTime is the workload's start time (/proc/<pid>/stat field 22): a live process
	// with the pid but another start time is not the workload.
	PidStartTime uint64 `json:"pidStartTime"`
}

// containerProcs are the process provider's processes of one agent, seen from /proc.
type containerProcs struct {
	// Supervisors are the live processes whose VK_STATIC_SUPERVISOR is a directory under the
	// agent's containers directory, by pid.
	Supervisors map[int]string
	// Workloads are the live processes that are what a state.json records (pid and start time),
	// by pid.
	Workloads map[int]string
	// States are every state.json read.
	States []containerState
}

// containersDir is where an agent's process provider keeps its containers (--root-dir/process).
func containersDir(agentDir string) string {
	return filepath.Join(agentDir, "root", "process", "containers")
}

// findContainerProcs reads every container's state.json under dir (an agent's containers
// directory) and scans /proc for supervisors of those containers and for the workloads
// recorded there or in known (states read earlier: a removed container takes its state.json
// with it). Supervisors are found by their environment, not by the state files, so that one
// that has not written its state yet is found too.
func findContainerProcs(dir string, known []containerState) (containerProcs, error) {
	out := containerProcs{Supervisors: map[int]string{}, Workloads: map[int]string{}}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return out, err
	}
	states, err := readContainerStates(dir)
	if err != nil {
		return out, err
	}
	out.States = states
	recorded := map[int]containerState{}
	for _, st := range append(known, states...) {
		if st.Pid > 0 {
			recorded[st.Pid] = st
		}
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if d := supervisorDirOf(pid); d != "" && isUnder(d, dir) {
			out.Supervisors[pid] = d
			continue
		}
		if st, ok := recorded[pid]; ok {
			if start, alive := procStartTime(pid); alive && start == st.PidStartTime {
				out.Workloads[pid] = st.Dir
			}
		}
	}
	return out, nil
}

// readContainerStates reads <dir>/*/state.json; a container without one was never started.
func readContainerStates(dir string) ([]containerState, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "state.json"))
	if err != nil {
		return nil, err
	}
	var out []containerState
	var errs []error
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st := containerState{Dir: filepath.Dir(p)}
		if err := json.Unmarshal(data, &st); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}

// supervisorDirOf is the VK_STATIC_SUPERVISOR of pid's environment, "" for other processes
// (and for those whose environment cannot be read).
func supervisorDirOf(pid int) string {
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

// procStartTime is /proc/<pid>/stat field 22; alive is false for a process that is gone or a
// zombie (it has ended).
func procStartTime(pid int) (start uint64, alive bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	return parseStatStart(string(data))
}

// parseStatStart returns the start time (field 22) of a /proc/<pid>/stat line, and whether the
// process is alive (its state is not Z or X). Fields are counted from the last ')': the
// command name may hold spaces and parentheses.
func parseStatStart(stat string) (uint64, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	return start, err == nil
}

func isUnder(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// count is how many container processes are alive.
func (c containerProcs) count() int { return len(c.Supervisors) + len(c.Workloads) }

// String lists the processes for a report: pid, role and container directory.
func (c containerProcs) String() string { return c.summary(0) }

// summary is String with at most limit processes named (0: all) and how many more there are.
func (c containerProcs) summary(limit int) string {
	var parts []string
	for _, pid := range slices.Sorted(maps.Keys(c.Supervisors)) {
		parts = append(parts, fmt.Sprintf("supervisor %d (%s)", pid, filepath.Base(c.Supervisors[pid])))
	}
	for _, pid := range slices.Sorted(maps.Keys(c.Workloads)) {
		parts = append(parts, fmt.Sprintf("workload %d (%s)", pid, filepath.Base(c.Workloads[pid])))
	}
	if limit > 0 && len(parts) > limit {
		return fmt.Sprintf("%s and %d more", strings.Join(parts[:limit], ", "), len(parts)-limit)
	}
	return strings.Join(parts, ", ")
}

// kill sends SIGKILL to every process found: each workload's process group (it leads one) and
// each supervisor. Only processes found through the agent's own directory are touched.
func (c containerProcs) kill() {
	for pid := range c.Workloads {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for pid := range c.Supervisors {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// Stat is what this runtime reads from /proc/<pid>/stat.
type Stat struct {
	State     byte
	Session   int
	Utime     uint64 // clock ticks
	Stime     uint64
	Cutime    uint64 // of waited-for children
	Cstime    uint64
	StartTime uint64 // clock ticks after boot
}

// ReadStat parses /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from its last ')'.
func ReadStat(pid int) (*Stat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(data, ')')
	if end < 0 || end+2 >= len(data) {
		return nil, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	// fields[0] is field 3 (state).
	fields := bytes.Fields(data[end+2:])
	if len(fields) < 20 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	field := func(n int) uint64 {
		v, _ := strconv.ParseUint(string(fields[n-3]), 10, 64)
		return v
	}
	st := &Stat{
		State:     fields[0][0],
		Session:   int(field(6)),
		Utime:     field(14),
		Stime:     field(15),
		Cutime:    field(16),
		Cstime:    field(17),
		StartTime: field(22),
	}
	return st, nil
}

// ErrProcessGone: the recorded process no longer exists, or its pid now belongs to another.
var ErrProcessGone = errors.New("process gone")

// SameProcess reports whether pid still is the process that started at startTime, alive
// (a zombie has ended: it only waits to be reaped).
func SameProcess(pid int, startTime uint64) error {
	if pid <= 0 {
		return ErrProcessGone
	}
	st, err := ReadStat(pid)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return ErrProcessGone
		}
		return err
	}
	if st.StartTime != startTime || st.State == 'Z' || st.State == 'X' {
		return ErrProcessGone
	}
	return nil
}

// userHZ is the kernel's USER_HZ, the unit of /proc's times: 100 on every Linux architecture
// Go supports.
const userHZ = 100

func ticksToNanoseconds(ticks uint64) uint64 { return ticks * (1e9 / userHZ) }

// SessionUsage sums CPU time and resident memory over every process of session sid (a
// container's workload runs in its own session), plus the CPU time of the leader's children
// that have already ended.
func SessionUsage(sid int) (cpuNanos, rssBytes uint64, err error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	page := uint64(os.Getpagesize())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := ReadStat(pid)
		if err != nil || st.Session != sid {
			continue // ended meanwhile, or another session's
		}
		ticks := st.Utime + st.Stime
		if pid == sid {
			ticks += st.Cutime + st.Cstime
		}
		cpuNanos += ticksToNanoseconds(ticks)
		if statm, err := os.ReadFile("/proc/" + e.Name() + "/statm"); err == nil {
			if f := bytes.Fields(statm); len(f) >= 2 {
				pages, _ := strconv.ParseUint(string(f[1]), 10, 64)
				rssBytes += pages * page
			}
		}
	}
	return cpuNanos, rssBytes, nil
}

package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicksPerSecond is USER_HZ, 100 on every Linux architecture Go supports; /proc/PID/stat
// reports CPU time in these ticks.
const clockTicksPerSecond = 100

// procSample is what /proc tells about one process at one moment.
type procSample struct {
	CPUSeconds float64 // user + system time so far
	RSSBytes   int64   // resident set now (VmRSS)
	// AnonBytes is the private part of the resident set (RssAnon): VmRSS also counts the
	// binary's pages in the page cache, which every process of the same binary shares.
	AnonBytes int64
	// FileBytes is the file-backed part (RssFile): mostly the agent's own binary, mapped from
	// the page cache.
	FileBytes int64
	PeakRSS   int64 // high-water mark of the resident set (VmHWM)
}

// readProc samples /proc/PID/stat and /proc/PID/status.
func readProc(pid int) (procSample, error) {
	var s procSample
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("read /proc stat: %w", err)
	}
	if s.CPUSeconds, err = parseStatCPU(string(stat)); err != nil {
		return s, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("read /proc status: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch key {
		case "VmRSS":
			s.RSSBytes = parseKB(value)
		case "RssAnon":
			s.AnonBytes = parseKB(value)
		case "RssFile":
			s.FileBytes = parseKB(value)
		case "VmHWM":
			s.PeakRSS = parseKB(value)
		}
	}
	return s, sc.Err()
}

// readPss is the proportional set size of pid (/proc/PID/smaps_rollup): its private pages and
// its share of each shared one, so that the Pss of several processes adds up to the memory
// they take together.
func readPss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, fmt.Errorf("read /proc smaps_rollup: %w", err)
	}
	return parsePss(string(data))
}

func parsePss(rollup string) (int64, error) {
	for line := range strings.Lines(rollup) {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			return parseKB(strings.TrimSpace(v)), nil
		}
	}
	return 0, fmt.Errorf("no Pss in smaps_rollup")
}

// parseStatCPU returns utime+stime in seconds. The command name (field 2) may contain spaces
// and parentheses, so fields are counted from the last ')'.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat times %q %q", fields[11], fields[12])
	}
	return float64(utime+stime) / clockTicksPerSecond, nil
}

func parseKB(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n * 1024
}

// memPeaks is the largest private (RssAnon) and file-backed (RssFile) resident set seen in
// samples of one process. VmHWM has no such parts: they say whether a peak is the heap or the
// binary's pages.
type memPeaks struct {
	mu         sync.Mutex
	anon, file int64
}

func (m *memPeaks) add(s procSample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.anon, m.file = max(m.anon, s.AnonBytes), max(m.file, s.FileBytes)
}

func (m *memPeaks) get() (anon, file int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.anon, m.file
}

// memSampleInterval is how often sampleMem reads /proc: often enough to see a peak of the
// heap between two collections, which lasts about as long as a collection cycle.
const memSampleInterval = 50 * time.Millisecond

// sampleMem samples pid into m every memSampleInterval until done is closed or the process
// is gone.
func sampleMem(pid int, m *memPeaks, done <-chan struct{}) {
	t := time.NewTicker(memSampleInterval)
	defer t.Stop()
	for {
		s, err := readProc(pid)
		if err != nil {
			return
		}
		m.add(s)
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

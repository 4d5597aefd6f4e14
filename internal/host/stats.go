package host

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/internal/psi"
)

// userHZ is the unit of /proc/stat's CPU times on Linux.
const userHZ = 100

// Stats measures the node for the Summary API; the CPU rate is taken between two calls (the
// first reports none, as the kubelet's first sample does). Safe for concurrent use.
type Stats struct {
	NodeName string
	// RootDir is the directory whose filesystem is reported as the node's (Fs).
	RootDir string
	// StartTime is when the agent started (the node's SystemContainers' start time).
	StartTime time.Time

	mu       sync.Mutex
	lastCPU  uint64
	lastTime time.Time

	// pressureDir and cgroupV2, for tests: where the machine's pressure files are
	// (/proc/pressure) and whether the host is on cgroup v2 (unifiedCgroup).
	pressureDir string
	cgroupV2    func() bool
}

// Node reads /proc/stat, /proc/meminfo and statfs of RootDir; and on a host on cgroup v2 the
// machine's pressure stall information, /proc/pressure/{cpu,memory,io}, into the node's CPU,
// memory and IO stats, as the kubelet reports its root cgroup's (whose pressure files are the
// machine's). On cgroup v1 the cgroups have no pressure files, and Node reports none for the
// node either, though the kernel may have /proc/pressure: PSI is reported where it is for the
// pods too, on v2. (The kubelet's cAdvisor fills zeros on v1, which say nothing.) A pressure
// file that is missing (a kernel without PSI) or malformed leaves its resource out.
func (s *Stats) Node() (*statsv1alpha1.NodeStats, error) {
	busy, err := cpuBusyNanoseconds()
	if err != nil {
		return nil, err
	}
	mem, err := meminfo()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	t := metav1.NewTime(now)
	cpu := &statsv1alpha1.CPUStats{Time: t, UsageCoreNanoSeconds: &busy}
	s.mu.Lock()
	if !s.lastTime.IsZero() && busy >= s.lastCPU && now.After(s.lastTime) {
		rate := uint64(float64(busy-s.lastCPU) / now.Sub(s.lastTime).Seconds())
		cpu.UsageNanoCores = &rate
	}
	s.lastCPU, s.lastTime = busy, now
	s.mu.Unlock()

	total, available := mem["MemTotal"], mem["MemAvailable"]
	used := total - min(available, total)
	free := available
	ns := &statsv1alpha1.NodeStats{
		NodeName:  s.NodeName,
		StartTime: metav1.NewTime(s.StartTime),
		CPU:       cpu,
		Memory:    &statsv1alpha1.MemoryStats{Time: t, WorkingSetBytes: &used, UsageBytes: &used, AvailableBytes: &free},
	}
	s.addPressure(ns)
	var fs syscall.Statfs_t
	if err := syscall.Statfs(s.RootDir, &fs); err == nil {
		capacity, avail := fs.Blocks*uint64(fs.Bsize), fs.Bavail*uint64(fs.Bsize)
		usedFs := (fs.Blocks - fs.Bfree) * uint64(fs.Bsize)
		ns.Fs = &statsv1alpha1.FsStats{Time: t, CapacityBytes: &capacity, AvailableBytes: &avail, UsedBytes: &usedFs}
	}
	return ns, nil
}

// addPressure adds the machine's pressure stall information to ns (see Node).
func (s *Stats) addPressure(ns *statsv1alpha1.NodeStats) {
	v2, dir := s.cgroupV2, s.pressureDir
	if v2 == nil {
		v2 = unifiedCgroup
	}
	if dir == "" {
		dir = "/proc/pressure"
	}
	if !v2() {
		return
	}
	r, err := psi.ReadAll(dir, "")
	if err != nil {
		klog.Background().V(2).Info("The node's pressure stall information left out", "err", err)
	}
	ns.CPU.PSI, ns.Memory.PSI = r.CPU, r.Memory
	if r.IO != nil {
		ns.IO = &statsv1alpha1.IOStats{Time: ns.CPU.Time, PSI: r.IO}
	}
}

// cgroup2Magic is the filesystem type of cgroup v2's hierarchy (CGROUP2_SUPER_MAGIC).
const cgroup2Magic = 0x63677270

// unifiedCgroup reports whether the host is on cgroup v2 (its unified hierarchy mounted at
// /sys/fs/cgroup), as the kubelet's cgroup library decides.
func unifiedCgroup() bool {
	var st syscall.Statfs_t
	return syscall.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == cgroup2Magic
}

// cpuBusyNanoseconds is the time all CPUs spent not idle since boot (the "cpu" line of
// /proc/stat without idle and iowait).
func cpuBusyNanoseconds() (uint64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 5 || string(fields[0]) != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy uint64
	for i, f := range fields[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest times are already counted in user
			break
		}
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		busy += v
	}
	return busy * (uint64(time.Second) / userHZ), nil
}

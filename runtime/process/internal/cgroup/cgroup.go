package cgroup

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs"
	"github.com/opencontainers/cgroups/fs2"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/internal/psi"
	"github.com/vk-static/vk-static/podutil"
)

// Config is the hierarchy: the kubelet's flags of the same names.
type Config struct {
	// Root is --cgroup-root: the cgroup under which kubepods is made; "" is "/".
	Root string
	// PerQOS is --cgroups-per-qos: kubepods and its burstable and besteffort children, with
	// each pod under its class.
	PerQOS bool
	// PodPidsLimit is --pod-pids-limit: the most processes and threads a pod's cgroup holds;
	// zero or negative is no limit.
	PodPidsLimit int64
	// SingleProcessOOMKill is the kubelet's singleProcessOOMKill: on cgroup v2 the OOM killer
	// ends only the process it chose, as on v1, instead of the container's every process
	// (memory.oom.group, which the kubelet sets on each container's cgroup by default).
	SingleProcessOOMKill bool
}

// Paths are a cgroup's directories as the library gives them (Manager.GetPaths): by
// controller on v1, the one directory under "" on v2. They are recorded with the sandbox and
// the container so that a restarted agent finds the cgroups again.
type Paths map[string]string

// Hierarchy makes and reads the pods' and containers' cgroups.
type Hierarchy struct {
	cfg Config
	v2  bool
	// oomGroup: containers' cgroups get memory.oom.group=1 (v2, a kernel that has it, and not
	// Config.SingleProcessOOMKill).
	oomGroup bool
	// mounts are the mount points of the v1 hierarchies cgroups are made in (v1Controllers
	// that are mounted), by controller; none on v2.
	mounts map[string]string
}

// v1Controllers are the cgroup v1 hierarchies a pod's and a container's cgroups are made in:
// those whose files the runtime writes or reads — memory (the limit, usage, the OOM kill count),
// cpu (shares, quota), cpuacct (CPU usage), pids (--pod-pids-limit) and freezer (KillAll) — and
// no others. The library, left to itself, makes a directory in every mounted hierarchy (ten
// here: cpuset copying its parent's cpus and mems into each, devices its parent's rules), which
// was 30% of the agent's CPU to start 100 containers (docs/performance.md, process-100) for
// nothing this runtime enforces or reads: its processes use the host's devices and every CPU, as
// the agent does, and stay in the agent's cgroup of those other hierarchies. Records written
// before name every hierarchy (Paths); those are used as they are.
var v1Controllers = [...]string{"memory", "cpu", "cpuacct", "pids", "freezer"}

// New returns the hierarchy, or why cgroups cannot be used on this host.
func New(cfg Config) (*Hierarchy, error) {
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if !path.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("--cgroup-root %q is not an absolute cgroup path", cfg.Root)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("the agent is not root")
	}
	h := &Hierarchy{cfg: cfg, v2: cgroups.IsCgroup2UnifiedMode()}
	if !h.v2 {
		h.mounts = map[string]string{}
		for _, c := range v1Controllers {
			if mnt, err := cgroups.FindCgroupMountpoint("", c); err == nil {
				h.mounts[c] = mnt
			}
		}
		if len(h.mounts) == 0 {
			return nil, fmt.Errorf("none of the cgroup v1 controllers %s is mounted", strings.Join(v1Controllers[:], ", "))
		}
	}
	// Making the QoS cgroups proves that the hierarchy is there and writable.
	burstable, err := h.ensure(h.qosPath(corev1.PodQOSBurstable), &cgroups.Resources{})
	if err != nil {
		return nil, err
	}
	if h.v2 && !cfg.SingleProcessOOMKill {
		// Any cgroup below one with the memory controller has the file (Linux 4.19 and later).
		h.oomGroup = cgroups.PathExists(path.Join(burstable[""], "memory.oom.group"))
	}
	if cfg.PerQOS {
		if _, err := h.ensure(h.qosPath(corev1.PodQOSBestEffort), &cgroups.Resources{CpuShares: minShares}); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Version is 1 or 2.
func (h *Hierarchy) Version() int {
	if h.v2 {
		return 2
	}
	return 1
}

// qosPath is the cgroup of the pods of a QoS class: kubepods itself for Guaranteed pods (and
// all pods without PerQOS), kubepods/burstable and kubepods/besteffort.
func (h *Hierarchy) qosPath(qos corev1.PodQOSClass) string {
	if !h.cfg.PerQOS {
		return h.cfg.Root
	}
	base := path.Join(h.cfg.Root, "kubepods")
	switch qos {
	case corev1.PodQOSBurstable:
		return path.Join(base, "burstable")
	case corev1.PodQOSBestEffort:
		return path.Join(base, "besteffort")
	}
	return base
}

// PodPath is pod's cgroup, as the kubelet names it.
func (h *Hierarchy) PodPath(pod *corev1.Pod) string {
	return path.Join(h.qosPath(podutil.QOSClass(pod)), "pod"+string(pod.UID))
}

// EnsurePod makes pod's cgroup (and its parents) with the pod's limits, or sets them on the one
// there.
func (h *Hierarchy) EnsurePod(pod *corev1.Pod) (Paths, error) {
	qos := podutil.QOSClass(pod)
	return h.ensure(h.PodPath(pod), podResources(pod, qos, h.cfg.PodPidsLimit))
}

// CreateContainer makes the cgroup of container id of pod, whose cgroup is podPaths, with the
// container's limits: a directory id in each of the pod's. A pod's cgroup that is gone (its
// containers had all ended when the agent stopped: RemoveIfEmpty) is made again first, with the
// pod's limits: the container's would otherwise be made without them.
func (h *Hierarchy) CreateContainer(podPaths Paths, pod *corev1.Pod, id string, c *corev1.Container) (Paths, error) {
	if len(podPaths) == 0 {
		return nil, errors.New("no pod cgroup recorded")
	}
	if !h.Exists(podPaths) && pod != nil {
		if _, err := h.create(maps.Clone(podPaths), podResources(pod, podutil.QOSClass(pod), h.cfg.PodPidsLimit)); err != nil {
			return nil, err
		}
	}
	paths := Paths{}
	for name, dir := range podPaths {
		paths[name] = path.Join(dir, id)
	}
	res := containerResources(c)
	if h.oomGroup {
		// As the kubelet: the container's processes are OOM-killed together, never one of them
		// left behind, and the container ends as a whole (exit code 137).
		res.Unified = map[string]string{"memory.oom.group": "1"}
	}
	return h.create(paths, res)
}

// UpdatePod sets pod's limits on its existing cgroup podPaths: an in-place resize, with pod's
// containers' resources as the node has allocated them.
func (h *Hierarchy) UpdatePod(podPaths Paths, pod *corev1.Pod) error {
	return h.update(podPaths, podResources(pod, podutil.QOSClass(pod), h.cfg.PodPidsLimit))
}

// UpdateContainer sets c's limits on the existing cgroup paths of one of its instances: an
// in-place resize of a running container.
func (h *Hierarchy) UpdateContainer(paths Paths, c *corev1.Container) error {
	return h.update(paths, containerResources(c))
}

// update sets res on the existing cgroup paths.
func (h *Hierarchy) update(paths Paths, res *cgroups.Resources) error {
	m, err := h.load(paths)
	if err != nil {
		return err
	}
	if h.v2 && res.CpuShares != 0 && res.CpuWeight == 0 {
		res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(res.CpuShares)
	}
	if err := m.Set(res); err != nil {
		return fmt.Errorf("set the limits of cgroup %s: %w", h.procsDir(paths), err)
	}
	return nil
}

// ensure makes the cgroup at the cgroup path p with res: in the unified hierarchy (v2), else
// in each of the v1 hierarchies of v1Controllers that is mounted.
func (h *Hierarchy) ensure(p string, res *cgroups.Resources) (Paths, error) {
	if h.v2 {
		return h.create(Paths{"": path.Join("/sys/fs/cgroup", p)}, res)
	}
	paths := Paths{}
	for name, mnt := range h.mounts {
		paths[name] = path.Join(mnt, p)
	}
	return h.create(paths, res)
}

// create makes the cgroup of the directories paths (the one under "" on v2) with res.
func (h *Hierarchy) create(paths Paths, res *cgroups.Resources) (Paths, error) {
	cg := &cgroups.Cgroup{Resources: res}
	var m cgroups.Manager
	var err error
	if h.v2 {
		m, err = fs2.NewManager(cg, paths[""])
	} else {
		// With its paths given, the library makes and sets only those.
		m, err = fs.NewManager(cg, maps.Clone(paths))
	}
	name := h.procsDir(paths)
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", name, err)
	}
	return apply(m, name, res)
}

func apply(m cgroups.Manager, name string, res *cgroups.Resources) (Paths, error) {
	if err := m.Apply(-1); err != nil {
		return nil, fmt.Errorf("create cgroup %s: %w", name, err)
	}
	if res.CpuShares != 0 && res.CpuWeight == 0 {
		if _, ok := m.GetPaths()[""]; ok && len(m.GetPaths()) == 1 {
			res.CpuWeight = cgroups.ConvertCPUSharesToCgroupV2Value(res.CpuShares)
		}
	}
	if err := m.Set(res); err != nil {
		return nil, fmt.Errorf("set the limits of cgroup %s: %w", name, err)
	}
	return Paths(m.GetPaths()), nil
}

// load is the library's manager of the existing cgroup at paths.
func (h *Hierarchy) load(paths Paths) (cgroups.Manager, error) {
	if len(paths) == 0 {
		return nil, errors.New("no cgroup recorded")
	}
	if h.v2 {
		return fs2.NewManager(&cgroups.Cgroup{Resources: &cgroups.Resources{}}, paths[""])
	}
	return fs.NewManager(&cgroups.Cgroup{Resources: &cgroups.Resources{}}, maps.Clone(paths))
}

// procsDir is the directory of the cgroup whose cgroup.procs lists its processes: the one
// directory on v2; on v1 any hierarchy's (every process of the container joined each), the
// memory one first. (The library reads the devices hierarchy's, which is no longer made.)
func (h *Hierarchy) procsDir(paths Paths) string {
	if h.v2 {
		return paths[""]
	}
	for _, c := range v1Controllers {
		if dir, ok := paths[c]; ok {
			return dir
		}
	}
	for _, dir := range paths {
		return dir
	}
	return ""
}

// Usage is what the stats report of a cgroup.
type Usage struct {
	// CPU is the CPU time used, in nanoseconds.
	CPU uint64
	// Memory is the memory usage; WorkingSet that less the inactive file cache, as cAdvisor
	// computes it for the kubelet.
	Memory, WorkingSet uint64
	// Throttled is how often, and how long in nanoseconds, the CPU quota held the cgroup back.
	ThrottledPeriods, ThrottledTime uint64
	// Pids are the processes in the cgroup (any session).
	Pids int
}

// Stats reads the cgroup's usage.
func (h *Hierarchy) Stats(paths Paths) (*Usage, error) {
	m, err := h.load(paths)
	if err != nil {
		return nil, err
	}
	st, err := m.GetStats()
	if err != nil {
		return nil, err
	}
	u := &Usage{
		CPU:              st.CpuStats.CpuUsage.TotalUsage,
		Memory:           st.MemoryStats.Usage.Usage,
		ThrottledPeriods: st.CpuStats.ThrottlingData.ThrottledPeriods,
		ThrottledTime:    st.CpuStats.ThrottlingData.ThrottledTime,
	}
	inactive := st.MemoryStats.Stats["total_inactive_file"]
	if h.v2 {
		inactive = st.MemoryStats.Stats["inactive_file"]
	}
	u.WorkingSet = u.Memory
	if inactive < u.WorkingSet {
		u.WorkingSet -= inactive
	} else {
		u.WorkingSet = 0
	}
	if pids, err := cgroups.GetAllPids(h.procsDir(paths)); err == nil {
		u.Pids = len(pids)
	}
	return u, nil
}

// Pressure reads the cgroup's pressure stall information (cpu.pressure, memory.pressure,
// io.pressure), as the kubelet reports it on cgroup v2; none on v1, which has no such files
// (the kubelet's cAdvisor reports zeros there, which say nothing: they are left out). A file
// that is missing (a kernel without PSI, PSI off) leaves its resource nil; one that is
// malformed too, with the error returned.
func (h *Hierarchy) Pressure(paths Paths) (psi.Resources, error) {
	if !h.v2 {
		return psi.Resources{}, nil
	}
	dir, ok := paths[""]
	if !ok {
		return psi.Resources{}, errors.New("no cgroup v2 directory recorded")
	}
	return psi.ReadAll(dir, ".pressure")
}

// OOMKills is how many processes of the cgroup the kernel's OOM killer ended: memory.events'
// oom_kill on v2, memory.oom_control's on v1 (Linux 4.13 and later).
func (h *Hierarchy) OOMKills(paths Paths) (uint64, error) {
	m, err := h.load(paths)
	if err != nil {
		return 0, err
	}
	return m.OOMKillCount()
}

// Exists reports whether any directory of the cgroup is still there.
func (h *Hierarchy) Exists(paths Paths) bool {
	for _, dir := range paths {
		if _, err := os.Stat(dir); err == nil {
			return true
		}
	}
	return false
}

// Pids are the processes in the cgroup and below.
func (h *Hierarchy) Pids(paths Paths) ([]int, error) {
	if len(paths) == 0 {
		return nil, errors.New("no cgroup recorded")
	}
	return cgroups.GetAllPids(h.procsDir(paths))
}

// KillAll kills every process in the cgroup, whatever its session: cgroup.kill on v2 (5.14 and
// later), else the processes frozen (so that none forks meanwhile), killed and thawed.
func (h *Hierarchy) KillAll(paths Paths) error {
	m, err := h.load(paths)
	if err != nil {
		return err
	}
	dir := h.procsDir(paths)
	if !cgroups.PathExists(dir) {
		return nil
	}
	if h.v2 {
		if err := cgroups.WriteFile(paths[""], "cgroup.kill", "1"); err == nil {
			return nil
		}
	}
	frozen := m.Freeze(cgroups.Frozen) == nil
	pids, err := cgroups.GetAllPids(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil // removed meanwhile: nothing left to kill
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if frozen {
		if terr := m.Freeze(cgroups.Thawed); terr != nil && err == nil {
			err = terr
		}
	}
	return err
}

// EndedByOOMKill reports whether a container ended because the kernel's OOM killer killed it:
// its workload was killed (exit code 137, SIGKILL's) and its cgroup counts an OOM kill
// (oomKills, OOMKills). An OOM kill of another process of the container — possible on v1 and
// with Config.SingleProcessOOMKill, where the killer takes one process — does not end it: a
// shell whose child was killed may go on and exit 0, and its end is its own. (containerd
// reports any OOM kill in the container as its reason; the kubelet on v2, where the whole
// container goes, reports OOMKilled with 137.)
func EndedByOOMKill(oomKills uint64, exitCode int32) bool {
	return oomKills > 0 && exitCode == oomKilledExitCode
}

// oomKilledExitCode is the exit code of a process SIGKILL ended: 128 + 9.
const oomKilledExitCode = 128 + int32(syscall.SIGKILL)

// RemoveIfEmpty removes the cgroup when nothing is in it: no process, no cgroup below it. A
// cgroup in use stays as it is (rmdir refuses it: EBUSY), and one gone already is no error.
func (h *Hierarchy) RemoveIfEmpty(paths Paths) error {
	var errs []error
	for _, dir := range paths {
		err := syscall.Rmdir(dir)
		if err != nil && !errors.Is(err, syscall.EBUSY) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// Destroy removes the cgroup (its processes must have ended).
func (h *Hierarchy) Destroy(paths Paths) error {
	if len(paths) == 0 {
		return nil
	}
	return cgroups.RemovePaths(paths)
}

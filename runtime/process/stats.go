package process

import (
	"context"
	"fmt"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/cgroup"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// ContainerStats measures the container from its cgroup (cgroupStats) where it has one; else
// the processes of the workload's session (it is a session leader, and what it starts stays in
// its session unless it calls setsid): CPU time (user+system, plus that of its children that
// have ended) and resident memory, summed. Exec'd commands run in sessions of their own and are
// not counted.
func (r *Runtime) ContainerStats(ctx context.Context, containerID string) (*lifecycle.ContainerStats, error) {
	rec, err := r.loadContainer(containerID)
	if err != nil {
		return nil, err
	}
	st, err := r.readState(containerID)
	if err != nil {
		return nil, err
	}
	if st == nil || st.State != records.StateRunning || procfs.SameProcess(st.Pid, st.PidStartTime) != nil {
		return nil, fmt.Errorf("container %s: %w", containerID, ErrNotRunning)
	}
	if r.cgroups != nil && len(rec.Cgroups) > 0 {
		return r.cgroupStats(ctx, rec)
	}
	now := r.clock.Now()
	cpu, rss, err := procfs.SessionUsage(st.Pid)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", containerID, err)
	}
	return &lifecycle.ContainerStats{Timestamp: now, CPUUsageCoreNanoSeconds: cpu, MemoryWorkingSetBytes: rss, MemoryUsageBytes: rss}, nil
}

var _ lifecycle.SandboxStatsReader = (*Runtime)(nil)

// SandboxStats measures the pod of a sandbox as a whole (lifecycle.SandboxStatsReader): the
// pressure stall information of the pod's cgroup on cgroup v2, which the kubelet reports for a
// pod and which cannot be summed from its containers'. Without cgroups, or on v1, there is
// none, and no error.
func (r *Runtime) SandboxStats(ctx context.Context, sandboxID string) (*lifecycle.SandboxStats, error) {
	rec, err := r.loadSandbox(sandboxID)
	if err != nil {
		return nil, err
	}
	s := &lifecycle.SandboxStats{Timestamp: r.clock.Now()}
	if r.cgroups == nil || len(rec.Cgroups) == 0 {
		return s, nil
	}
	s.PSI = r.cgroupPressure(ctx, rec.Cgroups, "sandbox", sandboxID)
	return s, nil
}

// cgroupPressure reads a cgroup's pressure stall information. A pressure file the kernel
// wrote malformed leaves that resource out, reported, and the stats go on without it.
func (r *Runtime) cgroupPressure(ctx context.Context, paths cgroup.Paths, kind, id string) lifecycle.PSI {
	p, err := r.cgroups.Pressure(paths)
	if err != nil {
		logger(ctx).V(2).Info("Pressure stall information left out", kind, id, "err", err)
	}
	return lifecycle.PSI{CPU: p.CPU, Memory: p.Memory, IO: p.IO}
}

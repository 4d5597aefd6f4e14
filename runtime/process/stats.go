package process

import (
	"context"
	"fmt"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// ContainerStats measures the processes of the workload's session (it is a session leader,
// and what it starts stays in its session unless it calls setsid): CPU time (user+system, plus
// that of its children that have ended) and resident memory, summed. Exec'd commands run in
// sessions of their own and are not counted.
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
		return r.cgroupStats(rec)
	}
	now := r.clock.Now()
	cpu, rss, err := procfs.SessionUsage(st.Pid)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", containerID, err)
	}
	return &lifecycle.ContainerStats{Timestamp: now, CPUUsageCoreNanoSeconds: cpu, MemoryWorkingSetBytes: rss, MemoryUsageBytes: rss}, nil
}

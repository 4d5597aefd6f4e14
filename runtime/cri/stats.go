package cri

import (
	"context"
	"time"

	"github.com/vk-static/vk-static/lifecycle"
)

// ContainerStats is the container's CPU, memory and writable layer use from CRI ContainerStats.
func (r *Runtime) ContainerStats(ctx context.Context, containerID string) (*lifecycle.ContainerStats, error) {
	s, err := r.rs.ContainerStats(ctx, containerID)
	if err != nil {
		return nil, notFound(err, "container", containerID)
	}
	out := &lifecycle.ContainerStats{
		CPUUsageCoreNanoSeconds: s.GetCpu().GetUsageCoreNanoSeconds().GetValue(),
		MemoryWorkingSetBytes:   s.GetMemory().GetWorkingSetBytes().GetValue(),
		MemoryUsageBytes:        s.GetMemory().GetUsageBytes().GetValue(),
		WritableLayerBytes:      s.GetWritableLayer().GetUsedBytes().GetValue(),
		WritableLayerInodes:     s.GetWritableLayer().GetInodesUsed().GetValue(),
	}
	if ts := s.GetCpu().GetTimestamp(); ts != 0 {
		out.Timestamp = time.Unix(0, ts)
	} else {
		out.Timestamp = r.cfg.Clock.Now()
	}
	return out, nil
}

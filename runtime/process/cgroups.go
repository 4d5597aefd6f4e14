package process

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/process/internal/cgroup"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// Cgroups configures the runtime's cgroups, the kubelet's hierarchy with its cgroupfs driver
// (package cgroup): the flags of the same names.
type Cgroups struct {
	// Root is --cgroup-root ("" is "/").
	Root string
	// PerQOS is --cgroups-per-qos.
	PerQOS bool
	// PodPidsLimit is --pod-pids-limit; zero or negative is no limit.
	PodPidsLimit int64
	// SingleProcessOOMKill is --single-process-oom-kill (the kubelet's singleProcessOOMKill):
	// on cgroup v2 the OOM killer ends one process of a container, as on v1, not all of them.
	SingleProcessOOMKill bool
}

// ReasonOOMKilled is the reason of a container the kernel's OOM killer ended, as the kubelet
// reports it (cgroup.EndedByOOMKill).
const ReasonOOMKilled = "OOMKilled"

// initCgroups opens the hierarchy, or keeps why it cannot be used (CgroupsUnavailable).
func (r *Runtime) initCgroups() {
	if r.cfg.Cgroups == nil {
		return
	}
	h, err := cgroup.New(cgroup.Config{Root: r.cfg.Cgroups.Root, PerQOS: r.cfg.Cgroups.PerQOS, PodPidsLimit: r.cfg.Cgroups.PodPidsLimit,
		SingleProcessOOMKill: r.cfg.Cgroups.SingleProcessOOMKill})
	if err != nil {
		r.cgroupsErr = fmt.Errorf("cgroups cannot be used: %w", err)
		return
	}
	r.cgroups = h
}

// CgroupsUnavailable says why containers run without cgroups — their limits not enforced, their
// stats and stop by process group — or nil when they have them.
func (r *Runtime) CgroupsUnavailable() error {
	if r.cgroups != nil {
		return nil
	}
	if r.cgroupsErr != nil {
		return r.cgroupsErr
	}
	return fmt.Errorf("cgroups are not configured")
}

// CgroupVersion is 1 or 2, or 0 without cgroups.
func (r *Runtime) CgroupVersion() int {
	if r.cgroups == nil {
		return 0
	}
	return r.cgroups.Version()
}

// EnforcesLimits tells the lifecycle whether a pod's limits are enforced here, and if not why
// (lifecycle.LimitEnforcer).
func (r *Runtime) EnforcesLimits() (bool, string) {
	if err := r.CgroupsUnavailable(); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// podCgroup makes the cgroup of the sandbox's pod; nil without cgroups.
func (r *Runtime) podCgroup(pod *corev1.Pod) (cgroup.Paths, error) {
	if r.cgroups == nil || pod == nil {
		return nil, nil
	}
	paths, err := r.cgroups.EnsurePod(pod)
	if err != nil {
		return nil, fmt.Errorf("pod cgroup: %w", err)
	}
	return paths, nil
}

// containerCgroup makes container id's cgroup inside its pod's; nil without cgroups.
func (r *Runtime) containerCgroup(sb *sandboxRecord, id string, cfg *lifecycle.ContainerConfig) (cgroup.Paths, error) {
	if r.cgroups == nil || len(sb.Cgroups) == 0 {
		return nil, nil
	}
	paths, err := r.cgroups.CreateContainer(sb.Cgroups, cfg.Pod, id, cfg.Container)
	if err != nil {
		return nil, fmt.Errorf("container cgroup: %w", err)
	}
	return paths, nil
}

// killCgroup kills every process left in the container's cgroup: what a stop or the workload's
// end leaves (a process that called setsid, a daemon) goes with it, as with the kubelet.
func (r *Runtime) killCgroup(ctx context.Context, rec *containerRecord) {
	if r.cgroups == nil || len(rec.Cgroups) == 0 {
		return
	}
	if err := r.cgroups.KillAll(rec.Cgroups); err != nil {
		logger(ctx).Error(err, "Killing what is left in a container's cgroup", "container", rec.ID)
	}
}

// concludeCgroup finishes the cgroup of a container that has ended: what is left in it is
// killed, an end that an OOM kill caused is recorded as the reason (ReasonOOMKilled,
// cgroup.EndedByOOMKill), and the cgroup is removed. A container whose cgroup is gone already is left as it is, so a
// restarted agent calls it again safely.
func (r *Runtime) concludeCgroup(ctx context.Context, id string) {
	if r.cgroups == nil {
		return
	}
	rec, err := r.loadContainer(id)
	if err != nil || len(rec.Cgroups) == 0 {
		return
	}
	st, err := r.readState(id)
	if err != nil || st == nil || st.State != records.StateExited {
		return
	}
	if !r.cgroups.Exists(rec.Cgroups) {
		return // concluded before
	}
	if pids, err := r.cgroups.Pids(rec.Cgroups); err != nil || len(pids) > 0 {
		r.killCgroup(ctx, rec)
	}
	// Read after the kill above: it is the workload's end, recorded before, that tells.
	if ooms, err := r.cgroups.OOMKills(rec.Cgroups); err == nil && cgroup.EndedByOOMKill(ooms, st.ExitCode) && st.Reason == "" {
		st.Reason = ReasonOOMKilled
		_ = r.recordEnd(ctx, id, st) // reported there when it fails
		logger(ctx).V(2).Info("Container OOM-killed", "container", id, "name", rec.Config.Name, "oomKills", ooms, "exitCode", st.ExitCode)
	}
	if err := r.cgroups.Destroy(rec.Cgroups); err != nil {
		logger(ctx).Error(err, "Removing an ended container's cgroup", "container", id)
	}
}

// removeCgroup removes a container's cgroup with its record (after killing what may be left).
func (r *Runtime) removeCgroup(ctx context.Context, rec *containerRecord) error {
	if r.cgroups == nil || len(rec.Cgroups) == 0 {
		return nil
	}
	r.killCgroup(ctx, rec)
	if err := r.cgroups.Destroy(rec.Cgroups); err != nil {
		return fmt.Errorf("container %s: remove its cgroup: %w", rec.ID, err)
	}
	return nil
}

// cgroupStats measures a container from its cgroup: every process in it, whatever its session;
// on cgroup v2 with its pressure stall information.
func (r *Runtime) cgroupStats(ctx context.Context, rec *containerRecord) (*lifecycle.ContainerStats, error) {
	u, err := r.cgroups.Stats(rec.Cgroups)
	if err != nil {
		return nil, fmt.Errorf("container %s: cgroup stats: %w", rec.ID, err)
	}
	return &lifecycle.ContainerStats{Timestamp: r.clock.Now(), CPUUsageCoreNanoSeconds: u.CPU, MemoryWorkingSetBytes: u.WorkingSet, MemoryUsageBytes: u.Memory,
		Processes: uint64(max(u.Pids, 0)), PSI: r.cgroupPressure(ctx, rec.Cgroups, "container", rec.ID)}, nil
}

// removeIdlePodCgroups removes the cgroup of every pod that nothing runs in, for Close: with
// --stop-pods-on-exit the lifecycle has stopped every container (and their cgroups went as they
// ended), and the agent leaves no pod cgroup behind. Pods whose containers run on keep theirs;
// a pod whose cgroup went gets it back with its next container (cgroup.CreateContainer).
func (r *Runtime) removeIdlePodCgroups() {
	if r.cgroups == nil {
		return
	}
	ids, err := r.listIDs(sandboxesDir)
	if err != nil {
		return
	}
	for _, id := range ids {
		if rec, err := r.loadSandbox(id); err == nil && len(rec.Cgroups) > 0 {
			if err := r.cgroups.RemoveIfEmpty(rec.Cgroups); err != nil {
				logger(context.Background()).Error(err, "Removing the cgroup of a pod nothing runs in", "sandbox", id)
			}
		}
	}
}

// removePodCgroup removes the cgroup of a removed sandbox's pod, unless another sandbox of the
// same pod still uses it.
func (r *Runtime) removePodCgroup(ctx context.Context, rec *sandboxRecord) error {
	if r.cgroups == nil || len(rec.Cgroups) == 0 {
		return nil
	}
	ids, err := r.listIDs(sandboxesDir)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if other, err := r.loadSandbox(id); err == nil && id != rec.ID && other.Config.PodUID == rec.Config.PodUID {
			return nil
		}
	}
	if err := r.cgroups.Destroy(rec.Cgroups); err != nil {
		return fmt.Errorf("sandbox %s: remove the pod's cgroup: %w", rec.ID, err)
	}
	return nil
}

// Package cgroup is the process runtime's cgroup hierarchy, the kubelet's with its cgroupfs
// driver, through the cgroup library the kubelet itself uses (github.com/opencontainers/cgroups,
// runc's): cgroup v1 (each controller's hierarchy, package fs) and v2 (the unified hierarchy,
// package fs2) alike.
//
//	<Config.Root>/kubepods/pod<UID>/<container id>             Guaranteed pods
//	<Config.Root>/kubepods/burstable/pod<UID>/<container id>   Burstable pods
//	<Config.Root>/kubepods/besteffort/pod<UID>/<container id>  BestEffort pods
//
// (<Config.Root>/pod<UID>/... without Config.PerQOS.) On v1 the directories are made in the
// memory, cpu, cpuacct, pids and freezer hierarchies only (v1Controllers): the others hold
// nothing the runtime enforces or reads. Limits and requests are mapped as the
// kubelet maps them ([containerResources], [podResources]): a container's memory limit, CPU quota
// over a 100 ms period from its CPU limit, CPU shares (v1) or weight (v2) from its CPU request; the
// pod's cgroup has the sums where every container sets the limit, and Config.PodPidsLimit. On v2 a
// container's cgroup has memory.oom.group=1, as the kubelet sets it: the OOM killer ends the
// container's processes together (unless Config.SingleProcessOOMKill, the kubelet's
// singleProcessOOMKill); EndedByOOMKill tells a container the OOM killer ended from one that
// outlived an OOM kill of a child.
//
// The runtime creates a pod's cgroup with its sandbox and a container's with the container,
// and records the paths (Paths) so that a restarted agent finds them again; the supervisor puts
// the workload in its container's cgroup before it executes it. Stats, the OOM kill count, and
// killing everything in a cgroup (freezer on v1, cgroup.kill on v2) read the cgroup, so a
// process that calls setsid or double-forks escapes neither accounting nor a stop. On v2
// Pressure reads a pod's or a container's pressure stall information (package psi), which v1
// does not have.
//
// New says why cgroups cannot be used here (not root, nothing mounted, not writable); the
// runtime then runs containers without them, and says so.
package cgroup

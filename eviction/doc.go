// Package eviction is the kubelet's eviction manager in small: it measures the node's eviction
// signals every housekeeping period and holds them against the kubelet's thresholds, to report
// MemoryPressure, DiskPressure and PIDPressure as the kubelet does, and reclaims or evicts as
// its synchronize does.
//
// Signals (the kubelet's names): memory.available (the machine's MemAvailable), nodefs.available
// and nodefs.inodesFree (the filesystem of the agent's root directory, where pods' volumes and
// logs are), imagefs.available and imagefs.inodesFree (the runtime's image filesystem — CRI
// ImageFsInfo — or the nodefs for a runtime without one, as the kubelet's stats give the nodefs
// when images share it) and pid.available (the lower of kernel.pid_max and kernel.threads-max,
// less the tasks in /proc/loadavg).
//
// Thresholds are parsed as the kubelet parses --eviction-hard, --eviction-soft,
// --eviction-soft-grace-period and --eviction-minimum-reclaim (ParseThresholdConfig; the
// defaults DefaultEvictionHard). At every housekeeping the Manager does what the kubelet's
// synchronize does up to the choice of what to reclaim:
//
//   - a threshold is met when the signal's available quantity is below it (a percentage is of
//     the signal's capacity); one met before stays met until the quantity is back above the
//     threshold plus its minimum reclaim;
//   - the node condition of a met threshold is True at once, hard or soft, and stays True until
//     no threshold of it has been met for the pressure transition period
//     (--eviction-pressure-transition-period, 5 min);
//   - a soft threshold counts for eviction only once met for its grace period (Met).
//
// Then, as the kubelet ([Manager.evict]): for the first threshold met for its grace period (memory
// before the others) whose signal was measured anew, node-level reclaim first — for disk, the
// Config's ReclaimContainers and ReclaimImages (none for the nodefs when the imagefs is a
// filesystem of its own) — and a new measurement; if a threshold is still met, its minimum
// reclaim included, one pod of Config.ActivePods is evicted through Config.EvictPod: the first
// in the kubelet's ranking ([signalRankFuncs]: usage above requests, then priority, then usage
// above requests, for memory, disk or pids, on Config.PodStats) that is not critical
// (IsCriticalPod: static, mirror, system-critical priority), with 1 s of grace for a hard threshold
// and MaxPodGracePeriod (or the pod's own, if shorter) for a soft one, and the kubelet's message.
//
// Before that, at every housekeeping whatever the thresholds, the pods above their own local
// storage limits (an emptyDir's sizeLimit, an ephemeral-storage limit) are evicted, as the
// kubelet's localStorageCapacityIsolation does ([Manager.evictForLocalStorage]).
//
// The conditions carry the kubelet's reasons (KubeletHasInsufficientMemory,
// KubeletHasDiskPressure, KubeletHasInsufficientPID and their opposites). A Manager is a
// provider.NodeProvider's NotifyNodeStatus half: it reports the three conditions whenever one
// changes. A signal that cannot be measured is left out, as the kubelet leaves it out: its
// thresholds are never met.
//
// Smallest use:
//
//	thresholds, err := eviction.ParseThresholdConfig(eviction.DefaultEvictionHard, nil, nil, nil)
//	m := eviction.NewManager(eviction.Config{Thresholds: thresholds, Measure: (&eviction.Host{RootDir: dir}).Measure})
//	go m.Run(ctx)
package eviction

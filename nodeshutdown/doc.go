// Package nodeshutdown is the kubelet's node shutdown manager in small: it delays the host's
// shutdown long enough to stop the node's pods gracefully, in order of priority.
//
// At Run it connects to the system D-Bus (Config.BusAddress in tests), reads logind's
// InhibitDelayMaxUSec and takes a "delay" inhibitor lock on shutdown (logind's Inhibit: a file
// descriptor that delays the shutdown for as long as it is open, at most InhibitDelayMaxSec),
// then watches logind's PrepareForShutdown signal. On PrepareForShutdown(true), as the
// kubelet's managerImpl:
//
//   - ShutdownStatus says "node is shutting down" (the Node's Ready condition quotes it:
//     KubeletNotReady) and Config.NodeStatusChanged is called so the Node says it at once;
//   - the active pods (Config.ActivePods) are stopped group by group, lowest priority first
//     (Groups: the bands of shutdownGracePeriodByPodPriority, or the two of shutdownGracePeriod
//     and shutdownGracePeriodCriticalPods: non-critical pods with their difference, then
//     critical pods with shutdownGracePeriodCriticalPods), every pod of a group at once through
//     Config.StopPod with the group's grace period, or the pod's own if shorter, reason
//     Terminated and the kubelet's message; a group gets no longer than its grace period
//     before the next starts;
//   - then the lock is released and logind goes on with the shutdown.
//
// PrepareForShutdown(false) (a shutdown cancelled) clears ShutdownStatus and takes the lock
// again; a lost bus connection is made again every second.
//
// A pod's priority is its spec.priority, except that a pod eviction.IsCriticalPod calls
// critical (a static or mirror pod) counts as at least SystemCriticalPriority: the kubelet
// groups by spec.priority alone, but vk-static runs mostly static pods, the node
// administrator's, which the kubelet's eviction and admission already treat as critical, and
// they are stopped last.
//
// vk-static does not rewrite logind's configuration as the kubelet does (a drop-in in
// /etc/systemd/logind.conf.d and a SIGHUP): InhibitDelayMaxSec is the administrator's, set
// with the agent's unit (docs/deploy.md). A delay shorter than the grace period requested is
// reported at Run, and logind then ends the shutdown's wait early.
//
// Smallest use:
//
//	m := nodeshutdown.NewManager(nodeshutdown.Config{GracePeriod: 30 * time.Second,
//		GracePeriodCriticalPods: 10 * time.Second, ActivePods: pods, StopPod: stop})
//	go m.Run(ctx)
package nodeshutdown

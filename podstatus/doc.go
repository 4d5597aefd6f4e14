// Package podstatus reads and derives a pod's status the way the kubelet does, once for the
// controller (node/), the runtime layer (lifecycle/) and the simulator (provider/mock): whether
// a pod has finished, and the pod conditions the node agent owns (PodScheduled,
// PodReadyToStartContainers, Initialized, ContainersReady, Ready) — which they are and in what
// order, how each is derived from the container statuses, and when its transition time moves.
// It is pure: no I/O, no clock of its own.
//
//	s.Conditions = podstatus.Conditions(pod, s, sandboxReady, previous, now)
//	if podstatus.Finished(reported) { ... the pod may be forgotten ... }
package podstatus

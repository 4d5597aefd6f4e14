// Package lifecycle runs pods' containers the way the kubelet does, on any Runtime: the
// kubelet's kuberuntime in small. It is a node.PodLifecycleHandler (with the logs, exec, attach,
// port-forward and stats capabilities) built on a narrow Runtime interface that a backend
// implements — host processes (provider/process) or CRI. The backend runs containers; the
// lifecycle decides everything else: init containers in order, sidecars, restart policy and
// back-off, probes and hooks, grace periods, the environment and the downward API, volumes, and
// the pod's status and phase.
package lifecycle

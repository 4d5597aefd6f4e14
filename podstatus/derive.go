package podstatus

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// FromContainers is the status of each owned condition read from the container statuses and
// phase alone, for a provider that reports no conditions of its own (the lifecycle layer and
// the simulator report them; a library user's provider may not). It is coarser than the
// kubelet's generators ([Conditions]), which need what such a provider may not report (a regular
// init container's readiness, a sidecar's): an init container is done once it exited 0 (a sidecar:
// once started), the pod is ready while every main container reported is, and it is ready to
// start containers while it reports any and has not finished. No reasons, no messages.
func FromContainers(spec *corev1.PodSpec, s *corev1.PodStatus) map[corev1.PodConditionType]corev1.ConditionStatus {
	sidecars := make(map[string]bool, len(spec.InitContainers))
	for i := range spec.InitContainers {
		sidecars[spec.InitContainers[i].Name] = podutil.IsSidecar(&spec.InitContainers[i])
	}
	initialized := len(s.InitContainerStatuses) >= len(spec.InitContainers)
	for _, cs := range s.InitContainerStatuses {
		done := cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
		started := sidecars[cs.Name] && cs.Started != nil && *cs.Started // sidecars count once started
		if !done && !started {
			initialized = false
		}
	}
	ready := len(s.ContainerStatuses) > 0
	for _, cs := range s.ContainerStatuses {
		ready = ready && cs.Ready
	}
	terminal := IsTerminal(s)
	return map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodScheduled:              corev1.ConditionTrue,
		corev1.PodReadyToStartContainers: conditionStatus(!terminal && (len(s.ContainerStatuses) > 0 || len(s.InitContainerStatuses) > 0)),
		corev1.PodInitialized:            conditionStatus(initialized),
		corev1.ContainersReady:           conditionStatus(ready && !terminal),
		corev1.PodReady:                  conditionStatus(ready && !terminal),
	}
}

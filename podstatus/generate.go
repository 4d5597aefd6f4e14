package podstatus

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podutil"
)

// The kubelet's condition reasons (pkg/kubelet/status).
const (
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
	ReasonPodCompleted             = "PodCompleted"
	ReasonPodFailed                = "PodFailed"
)

// Conditions are the conditions the kubelet owns as its generateAPIPodStatus makes them
// (pkg/kubelet/status/generate.go), from the container statuses and phase already in s:
// ReadyToStartContainers (sandboxReady: the pod has a sandbox and is not stopped),
// Initialized, Ready, ContainersReady and PodScheduled. Ready reads the readiness gates'
// conditions from those others set that pod holds; those are not returned (the agent keeps
// them as the API server holds them and never writes them). A condition keeps the transition
// time it had in before (the status last reported, nil for none) while its status stays.
func Conditions(pod *corev1.Pod, s *corev1.PodStatus, sandboxReady bool, before *corev1.PodStatus, now metav1.Time) []corev1.PodCondition {
	var previous []corev1.PodCondition
	if before != nil {
		previous = before.Conditions
	}
	out := []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: conditionStatus(sandboxReady)},
		InitializedCondition(&pod.Spec, s),
		ReadyCondition(&pod.Spec, pod.Status.Conditions, s),
		ContainersReadyCondition(&pod.Spec, s),
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	}
	for i := range out {
		out[i].LastTransitionTime = TransitionTime(out[i], previous, now)
	}
	return out
}

// InitializedCondition is the kubelet's GeneratePodInitializedCondition: True once every init
// container completed (a sidecar: started), once the pod Succeeded (reason PodCompleted), or
// once any main container has run; else False, ContainersNotInitialized, naming the init
// containers not done.
func InitializedCondition(spec *corev1.PodSpec, s *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	var incomplete []string
	for i := range spec.InitContainers {
		ic := &spec.InitContainers[i]
		cs, ok := statusOf(s.InitContainerStatuses, ic.Name)
		switch {
		case !ok:
			incomplete = append(incomplete, ic.Name)
		case podutil.IsSidecar(ic):
			if cs.Started == nil || !*cs.Started {
				incomplete = append(incomplete, ic.Name)
			}
		case !cs.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	switch {
	case s.Phase == corev1.PodSucceeded:
		c.Reason = ReasonPodCompleted
	case anyMainContainerStarted(s):
	case len(incomplete) > 0:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonContainersNotInitialized
		c.Message = fmt.Sprintf("containers with incomplete status: %s", incomplete)
	}
	return c
}

func anyMainContainerStarted(s *corev1.PodStatus) bool {
	for _, cs := range s.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

// ContainersReadyCondition is the kubelet's GenerateContainersReadyCondition: False with the
// terminal phase's reason in a Succeeded or Failed pod, False naming the unready main
// containers and sidecars, else True.
func ContainersReadyCondition(spec *corev1.PodSpec, s *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	switch s.Phase {
	case corev1.PodSucceeded:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonPodCompleted
		return c
	case corev1.PodFailed:
		c.Status, c.Reason = corev1.ConditionFalse, ReasonPodFailed
		return c
	}
	var unready []string
	for i := range spec.InitContainers {
		ic := &spec.InitContainers[i]
		if !podutil.IsSidecar(ic) {
			continue
		}
		if cs, ok := statusOf(s.InitContainerStatuses, ic.Name); !ok || !cs.Ready {
			unready = append(unready, ic.Name)
		}
	}
	for _, mc := range spec.Containers {
		if cs, ok := statusOf(s.ContainerStatuses, mc.Name); !ok || !cs.Ready {
			unready = append(unready, mc.Name)
		}
	}
	if len(unready) > 0 {
		c.Status, c.Reason = corev1.ConditionFalse, ReasonContainersNotReady
		c.Message = fmt.Sprintf("containers with unready status: %s", unready)
	}
	return c
}

// ReadyCondition is the kubelet's GeneratePodReadyCondition: ContainersReady's status, reason
// and message while it is not True; then False, ReadinessGatesNotReady, while any readiness
// gate's condition among held (the conditions the pod holds; those the agent owns are not
// looked at) is missing or not True; else True.
func ReadyCondition(spec *corev1.PodSpec, held []corev1.PodCondition, s *corev1.PodStatus) corev1.PodCondition {
	c := ContainersReadyCondition(spec, s)
	c.Type = corev1.PodReady
	if c.Status != corev1.ConditionTrue {
		return c
	}
	var unready []string
	for _, gate := range spec.ReadinessGates {
		found := false
		for _, oc := range held {
			if oc.Type != gate.ConditionType || IsOwned(oc.Type) {
				continue
			}
			found = true
			if oc.Status != corev1.ConditionTrue {
				unready = append(unready, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(gate.ConditionType), oc.Status))
			}
			break
		}
		if !found {
			unready = append(unready, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(gate.ConditionType)))
		}
	}
	if len(unready) > 0 {
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, ReasonReadinessGatesNotReady, strings.Join(unready, ", ")
	}
	return c
}

func statusOf(statuses []corev1.ContainerStatus, name string) (corev1.ContainerStatus, bool) {
	for _, cs := range statuses {
		if cs.Name == name {
			return cs, true
		}
	}
	return corev1.ContainerStatus{}, false
}

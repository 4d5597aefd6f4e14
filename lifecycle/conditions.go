package lifecycle

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reasonPodFailed is the kubelet's ContainersReady and Ready reason in a Failed pod
// (pkg/kubelet/status).
const reasonPodFailed = "PodFailed"

// kubeletConditions are the pod condition types the kubelet owns and writes: every other
// condition (a readiness gate's, set by a controller) belongs to someone else and is kept as
// the API server holds it (kubetypes.PodConditionByKubelet).
var kubeletConditions = map[corev1.PodConditionType]bool{
	corev1.PodScheduled:              true,
	corev1.PodReady:                  true,
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReadyToStartContainers: true,
}

// isKubeletCondition reports whether a pod condition type is one the node agent owns; the
// others are kept as they are in the API server (a readiness gate's condition).
func isKubeletCondition(t corev1.PodConditionType) bool { return kubeletConditions[t] }

// podConditions are the conditions the kubelet owns as its generateAPIPodStatus makes them
// (pkg/kubelet/status/generate.go), from the container statuses and phase already in s:
// ReadyToStartContainers, Initialized, Ready, ContainersReady and PodScheduled. Ready reads the
// readiness gates' conditions from those others set that the pod holds (UpdatePod brings them
// as the API server has them); those are not reported: the agent keeps them as the API server
// holds them and never writes them (node: otherconditions.go). A condition keeps the
// transition time it was last reported with while its status stays.
func podConditions(st *podState, s *corev1.PodStatus, now metav1.Time) []corev1.PodCondition {
	var others, out []corev1.PodCondition
	for _, c := range st.pod.Status.Conditions {
		if !isKubeletCondition(c.Type) {
			others = append(others, c)
		}
	}
	ready := podReadyCondition(st.pod, others, s)
	for _, c := range []corev1.PodCondition{
		{Type: corev1.PodReadyToStartContainers, Status: conditionStatus(st.sandboxID != "" && !st.stopped)},
		podInitializedCondition(st.pod, s),
		ready,
		containersReadyCondition(st.pod, s),
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
	} {
		c.LastTransitionTime = now
		if st.status != nil {
			for _, old := range st.status.Conditions {
				if old.Type == c.Type && old.Status == c.Status {
					c.LastTransitionTime = old.LastTransitionTime
				}
			}
		}
		out = append(out, c)
	}
	return out
}

func conditionStatus(ok bool) corev1.ConditionStatus {
	if ok {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// podInitializedCondition is the kubelet's GeneratePodInitializedCondition: True once every
// init container completed (a sidecar: started), once the pod Succeeded (reason
// PodCompleted), or once any main container has run; else False, ContainersNotInitialized,
// naming the init containers not done.
func podInitializedCondition(pod *corev1.Pod, s *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	var incomplete []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		cs, ok := statusOf(s.InitContainerStatuses, ic.Name)
		switch {
		case !ok:
			incomplete = append(incomplete, ic.Name)
		case isSidecar(ic):
			if cs.Started == nil || !*cs.Started {
				incomplete = append(incomplete, ic.Name)
			}
		case !cs.Ready:
			incomplete = append(incomplete, ic.Name)
		}
	}
	switch {
	case s.Phase == corev1.PodSucceeded:
		c.Reason = reasonPodCompleted
	case anyMainContainerStarted(s):
	case len(incomplete) > 0:
		c.Status, c.Reason = corev1.ConditionFalse, reasonContainersNotInit
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

// containersReadyCondition is the kubelet's GenerateContainersReadyCondition: False with the
// terminal phase's reason in a Succeeded or Failed pod, False naming the unready main
// containers and sidecars, else True.
func containersReadyCondition(pod *corev1.Pod, s *corev1.PodStatus) corev1.PodCondition {
	c := corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}
	switch s.Phase {
	case corev1.PodSucceeded:
		c.Status, c.Reason = corev1.ConditionFalse, reasonPodCompleted
		return c
	case corev1.PodFailed:
		c.Status, c.Reason = corev1.ConditionFalse, reasonPodFailed
		return c
	}
	var unready []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if !isSidecar(ic) {
			continue
		}
		if cs, ok := statusOf(s.InitContainerStatuses, ic.Name); !ok || !cs.Ready {
			unready = append(unready, ic.Name)
		}
	}
	for _, mc := range pod.Spec.Containers {
		if cs, ok := statusOf(s.ContainerStatuses, mc.Name); !ok || !cs.Ready {
			unready = append(unready, mc.Name)
		}
	}
	if len(unready) > 0 {
		c.Status, c.Reason = corev1.ConditionFalse, reasonContainersNotReady
		c.Message = fmt.Sprintf("containers with unready status: %s", unready)
	}
	return c
}

// podReadyCondition is the kubelet's GeneratePodReadyCondition: ContainersReady's status,
// reason and message while it is not True; then False, ReadinessGatesNotReady, while any
// readiness gate's condition (in others, the conditions the pod holds that are not the
// agent's) is missing or not True; else True.
func podReadyCondition(pod *corev1.Pod, others []corev1.PodCondition, s *corev1.PodStatus) corev1.PodCondition {
	c := containersReadyCondition(pod, s)
	c.Type = corev1.PodReady
	if c.Status != corev1.ConditionTrue {
		return c
	}
	var unready []string
	for _, gate := range pod.Spec.ReadinessGates {
		found := false
		for _, oc := range others {
			if oc.Type != gate.ConditionType {
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
		c.Status, c.Reason, c.Message = corev1.ConditionFalse, conditionsReadinessGates, strings.Join(unready, ", ")
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

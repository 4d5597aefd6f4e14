package floor

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// RunningStatus is the status the floor writes for pod at now: phase Running, started at now,
// every condition the Ready check and ready latency read True since now, every init container
// completed and every container running and ready. Fields the bench does not read (IPs, QoS,
// image IDs) are left out: writing less is the point.
func RunningStatus(pod *corev1.Pod, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{
		Phase:     corev1.PodRunning,
		StartTime: &now,
	}
	for _, t := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range pod.Spec.InitContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

// statusPatch is the strategic-merge patch of pod's status subresource that makes it
// RunningStatus; the UID in it makes the API server refuse it for a pod of the same name
// created since (as the kubelet's status manager does).
func statusPatch(pod *corev1.Pod, now metav1.Time) ([]byte, error) {
	return patchOf(pod, RunningStatus(pod, now))
}

// patchOf is the strategic-merge patch of pod's status subresource that makes it st, with
// pod's UID as statusPatch's.
func patchOf(pod *corev1.Pod, st corev1.PodStatus) ([]byte, error) {
	type meta struct {
		UID string `json:"uid"`
	}
	return json.Marshal(struct {
		Metadata meta             `json:"metadata"`
		Status   corev1.PodStatus `json:"status"`
	}{meta{string(pod.UID)}, st})
}

// needsStatus: a pod the floor has not made Running yet and that is not ending.
func needsStatus(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodRunning &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

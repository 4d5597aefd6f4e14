package podstatus

import corev1 "k8s.io/api/core/v1"

// IsTerminal reports whether status's phase is final, Succeeded or Failed: nothing in the pod
// runs again (a nil status is not terminal).
func IsTerminal(status *corev1.PodStatus) bool {
	return status != nil && (status.Phase == corev1.PodSucceeded || status.Phase == corev1.PodFailed)
}

// Finished reports whether the pod has stopped running: its phase is final, or every container
// it reports is terminated (a provider that keeps a stopped pod's phase Running).
func Finished(status *corev1.PodStatus) bool {
	if status == nil {
		return false
	}
	if IsTerminal(status) {
		return true
	}
	if len(status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range status.ContainerStatuses {
		if cs.State.Terminated == nil {
			return false
		}
	}
	return true
}

package podutil

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// GracePeriod is how long a pod being stopped gets to stop: its deletion's grace period
// (deletionGracePeriodSeconds), else its terminationGracePeriodSeconds, else the API default
// of 30 s — as the kubelet's pod workers compute it.
func GracePeriod(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

package eviction

import (
	corev1 "k8s.io/api/core/v1"
)

// HardReservation is what the hard thresholds keep from pods, which the kubelet subtracts from
// the node's allocatable beside --system-reserved and --kube-reserved (its
// hardEvictionReservation): memory.available's threshold from memory, nodefs.available's from
// ephemeral-storage, a percentage taken of capacity. Soft thresholds reserve nothing.
func HardReservation(thresholds []Threshold, capacity corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, t := range thresholds {
		if t.GracePeriod != 0 {
			continue
		}
		var name corev1.ResourceName
		switch t.Signal {
		case SignalMemoryAvailable:
			name = corev1.ResourceMemory
		case SignalNodeFsAvailable:
			name = corev1.ResourceEphemeralStorage
		default:
			continue
		}
		c := capacity[name]
		out[name] = *t.Value.quantity(&c)
	}
	return out
}

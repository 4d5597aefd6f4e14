package eviction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The kubelet's eviction messages (helpers.go), which the evicted pod's status and event carry.
const (
	nodeLowMessageFmt      = "The node was low on resource: %v. "
	thresholdMetMessageFmt = "Threshold quantity: %v, available: %v. "
	containerMessageFmt    = "Container %s was using %s, request is %s, has larger consumption of %v. "
	podMessageFmt          = "Pod %s was using %s, request is %s, has larger consumption of %v. "
)

// evictionMessage is the kubelet's: the resource, the threshold met and what was available,
// then every container (init ones included, ephemeral ones not) using more of the resource
// than it requests — and, for memory, the pod when it sets a pod-level request.
func evictionMessage(res corev1.ResourceName, pod *corev1.Pod, stats statsFunc, thresholds []Threshold, observations Observations) string {
	message := fmt.Sprintf(nodeLowMessageFmt, res)
	if quantity, available := thresholdMetInfo(res, thresholds, observations); quantity != nil && available != nil {
		message += fmt.Sprintf(thresholdMetMessageFmt, quantity, available)
	}
	podStats, ok := stats(pod)
	if !ok {
		return message
	}
	if res == corev1.ResourceMemory && pod.Spec.Resources != nil && podStats.Memory != nil {
		if request, ok := pod.Spec.Resources.Requests[res]; ok {
			message += fmt.Sprintf(podMessageFmt, pod.Name, memoryUsage(podStats.Memory).String(), request.String(), res)
		}
	}
	containers := append(append([]corev1.Container(nil), pod.Spec.Containers...), pod.Spec.InitContainers...)
	for _, cs := range podStats.Containers {
		for _, c := range containers {
			if c.Name != cs.Name {
				continue
			}
			requests := c.Resources.Requests[res]
			var usage *resource.Quantity
			switch res {
			case corev1.ResourceEphemeralStorage:
				if cs.Rootfs != nil && cs.Rootfs.UsedBytes != nil && cs.Logs != nil && cs.Logs.UsedBytes != nil {
					usage = resource.NewQuantity(int64(*cs.Rootfs.UsedBytes+*cs.Logs.UsedBytes), resource.BinarySI) //nolint:gosec // sizes fit
				}
			case corev1.ResourceMemory:
				if cs.Memory != nil && cs.Memory.WorkingSetBytes != nil {
					usage = resource.NewQuantity(int64(*cs.Memory.WorkingSetBytes), resource.BinarySI) //nolint:gosec // sizes fit
				}
			}
			if usage != nil && usage.Cmp(requests) > 0 {
				message += fmt.Sprintf(containerMessageFmt, c.Name, usage.String(), requests.String(), res)
			}
			break
		}
	}
	return message
}

// thresholdMetInfo is the first met threshold of res, as a quantity, and what was available.
func thresholdMetInfo(res corev1.ResourceName, thresholds []Threshold, observations Observations) (quantity, available *resource.Quantity) {
	for _, t := range thresholds {
		if signalToResource[t.Signal] != res {
			continue
		}
		if o, ok := observations[t.Signal]; ok {
			return t.Value.quantity(o.Capacity), o.Available
		}
	}
	return nil, nil
}

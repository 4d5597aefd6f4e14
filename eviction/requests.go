package eviction

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-static/vk-static/podutil"
)

// podRequest is the kubelet's GetResourceRequestQuantity (v1resource): the pod's effective
// request of name — its pod-level request when it sets one, else the containers' sum or the
// largest init container's (with the sidecars started before it), whichever is more — plus
// the pod's overhead when the request is not zero.
func podRequest(pod *corev1.Pod, name corev1.ResourceName) resource.Quantity {
	format := resource.DecimalSI
	if name == corev1.ResourceMemory || name == corev1.ResourceStorage || name == corev1.ResourceEphemeralStorage {
		format = resource.BinarySI
	}
	total := resource.Quantity{Format: format}
	if r := pod.Spec.Resources; r != nil && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
		if q, ok := r.Requests[name]; ok {
			total.Add(q)
			return withOverhead(pod, name, total)
		}
	}
	total, _ = containersTotal(pod, format, func(c *corev1.Container) (resource.Quantity, bool) {
		q, ok := c.Resources.Requests[name]
		return q, ok
	})
	return withOverhead(pod, name, total)
}

// podLimit is the kubelet's PodLimits of name, counted as podRequest counts requests; false
// when no container sets one.
func podLimit(pod *corev1.Pod, name corev1.ResourceName) (resource.Quantity, bool) {
	return containersTotal(pod, resource.BinarySI, func(c *corev1.Container) (resource.Quantity, bool) {
		q, ok := c.Resources.Limits[name]
		return q, ok
	})
}

// containersTotal is the kubelet's resource helpers' total over the pod's containers of what
// of returns: the containers' sum with the sidecars', or the largest init container's with the
// sidecars started before it if that is more; false when no container has any.
func containersTotal(pod *corev1.Pod, format resource.Format, of func(*corev1.Container) (resource.Quantity, bool)) (resource.Quantity, bool) {
	total, found := resource.Quantity{Format: format}, false
	for i := range pod.Spec.Containers {
		if q, ok := of(&pod.Spec.Containers[i]); ok {
			total.Add(q)
			found = true
		}
	}
	sidecars := resource.Quantity{Format: format}
	initMax := resource.Quantity{Format: format}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		q, ok := of(c)
		found = found || ok
		step := q.DeepCopy()
		if podutil.IsSidecar(c) {
			total.Add(q)
			sidecars.Add(q)
			step = sidecars.DeepCopy()
		} else {
			step.Add(sidecars)
		}
		if step.Cmp(initMax) > 0 {
			initMax = step
		}
	}
	if initMax.Cmp(total) > 0 {
		total = initMax
	}
	return total, found
}

func withOverhead(pod *corev1.Pod, name corev1.ResourceName, q resource.Quantity) resource.Quantity {
	if o, ok := pod.Spec.Overhead[name]; ok && !q.IsZero() {
		q.Add(o)
	}
	return q
}

// podPriority is the kubelet's corev1helpers.PodPriority: a pod without one is at 0.
func podPriority(pod *corev1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

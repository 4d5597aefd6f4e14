package podutil

import (
	corev1 "k8s.io/api/core/v1"
)

// QOSClass is the pod's quality of service class as the kubelet computes it (GetPodQOS):
// static pods have no status.qosClass of the API server's, so it is computed from the spec.
func QOSClass(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	isGuaranteed, any := true, false
	for _, c := range append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for name, q := range c.Resources.Requests {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory || q.IsZero() {
				continue
			}
			any = true
			sum := requests[name]
			sum.Add(q)
			requests[name] = sum
		}
		seen := 0
		for name, q := range c.Resources.Limits {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory || q.IsZero() {
				continue
			}
			any, seen = true, seen+1
			sum := limits[name]
			sum.Add(q)
			limits[name] = sum
		}
		if seen < 2 {
			isGuaranteed = false
		}
	}
	if !any {
		return corev1.PodQOSBestEffort
	}
	if isGuaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				isGuaranteed = false
			}
		}
	}
	if isGuaranteed && len(limits) == 2 {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

package eviction

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// SystemCriticalPriority is the kubelet's scheduling.SystemCriticalPriority: a pod at or above
// it is critical.
const SystemCriticalPriority = 2000000000

// IsCriticalPod is the kubelet's kubelettypes.IsCriticalPod: a static pod, a mirror pod, or a
// pod of system-critical priority. The kubelet never evicts one (a static pod is not admitted
// again after an eviction), and admits one under any pressure.
func IsCriticalPod(pod *corev1.Pod) bool {
	if podutil.IsStaticPod(pod) || podutil.IsMirrorPod(pod) {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= SystemCriticalPriority
}

package lifecycle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/podutil"
)

// ReasonEvicted is the kubelet's reason for a pod refused, or evicted, for the node's pressure.
const ReasonEvicted = "Evicted"

// pressureAdmit is the kubelet's eviction admission (its eviction manager's Admit): under
// pressure (Config.Eviction's conditions) a critical pod (static, mirror, or of system-critical
// priority) is admitted; under memory pressure alone, a pod that is not BestEffort, or a
// BestEffort one that tolerates the memory-pressure taint; under any other pressure, none.
// The refusal is the kubelet's: reason Evicted, "The node had condition: [DiskPressure]. ".
func (p *Provider) pressureAdmit(pod *corev1.Pod) error {
	if p.eviction == nil {
		return nil
	}
	conditions := p.eviction.Conditions()
	if len(conditions) == 0 || eviction.IsCriticalPod(pod) {
		return nil
	}
	if len(conditions) == 1 && conditions[0] == corev1.NodeMemoryPressure {
		if podutil.QOSClass(pod) != corev1.PodQOSBestEffort || toleratesMemoryPressure(pod) {
			return nil
		}
	}
	return &Refusal{Reason: ReasonEvicted, Message: fmt.Sprintf("The node had condition: %v. ", conditions)}
}

// memoryPressureTaint is the taint a node under memory pressure has, which a BestEffort pod
// must tolerate to be admitted (the kubelet's eviction admission).
var memoryPressureTaint = corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}

// toleratesMemoryPressure is whether a toleration of the pod tolerates memoryPressureTaint, as
// the scheduler matches them (comparison operators, an alpha feature, off).
func toleratesMemoryPressure(pod *corev1.Pod) bool {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.Background(), &memoryPressureTaint, false) {
			return true
		}
	}
	return false
}

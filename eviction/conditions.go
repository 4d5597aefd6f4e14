package eviction

import corev1 "k8s.io/api/core/v1"

// pressureConditions are the three pressure conditions, as the kubelet's MemoryPressure,
// DiskPressure and PIDPressure setters write them (their "kubelet" is this agent, as in the node
// package's defaults): True while the eviction manager reports the pressure.
func pressureConditions(under []corev1.NodeConditionType) []corev1.NodeCondition {
	type texts struct{ reason, message string }
	kinds := []struct {
		t       corev1.NodeConditionType
		yes, no texts
	}{
		{corev1.NodeMemoryPressure,
			texts{"KubeletHasInsufficientMemory", "vk-static has insufficient memory available"},
			texts{"KubeletHasSufficientMemory", "vk-static has sufficient memory available"}},
		{corev1.NodeDiskPressure,
			texts{"KubeletHasDiskPressure", "vk-static has disk pressure"},
			texts{"KubeletHasNoDiskPressure", "vk-static has no disk pressure"}},
		{corev1.NodePIDPressure,
			texts{"KubeletHasInsufficientPID", "vk-static has insufficient PID available"},
			texts{"KubeletHasSufficientPID", "vk-static has sufficient PID available"}},
	}
	out := make([]corev1.NodeCondition, 0, len(kinds))
	for _, k := range kinds {
		c := corev1.NodeCondition{Type: k.t, Status: corev1.ConditionFalse, Reason: k.no.reason, Message: k.no.message}
		if hasCondition(under, k.t) {
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, k.yes.reason, k.yes.message
		}
		out = append(out, c)
	}
	return out
}

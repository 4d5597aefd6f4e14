package lifecycle

import corev1 "k8s.io/api/core/v1"

// limitsNotEnforced is the warning for a pod with limits on a runtime that cannot enforce them,
// "" when there is none to give.
func limitsNotEnforced(rt Runtime, pod *corev1.Pod) string {
	if !hasLimits(pod) {
		return ""
	}
	le, ok := rt.(LimitEnforcer)
	if !ok {
		return ""
	}
	enforced, why := le.EnforcesLimits()
	if enforced {
		return ""
	}
	return "resources.limits are not enforced on this node: its containers run without cgroup limits (" + why + ")"
}

// hasLimits reports whether any container of pod sets resource limits, which this lifecycle does
// not enforce (no cgroups).
func hasLimits(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if len(c.Resources.Limits) > 0 {
				return true
			}
		}
	}
	return pod.Spec.Resources != nil && len(pod.Spec.Resources.Limits) > 0
}

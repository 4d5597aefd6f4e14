package lifecycle

import corev1 "k8s.io/api/core/v1"

// LimitEnforcer is a Runtime that says whether it enforces a pod's resource limits (the
// process runtime does with cgroups, when it can use them). A Runtime that does not implement it
// is taken to enforce them, as a CRI runtime does.
type LimitEnforcer interface {
	// EnforcesLimits reports whether limits are enforced, and if not why.
	EnforcesLimits() (bool, string)
}

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

package node

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podstatus"
)

// Conditions of others. A pod's status holds conditions the agent does not own: a readiness
// gate's (set by a load balancer controller), DisruptionTarget (set by the eviction API). The
// kubelet keeps them as the API server holds them and never writes them (its status patch is a
// two-way diff of what it wrote): the agent compares its status with the API object's with
// them in place, and leaves them out of what it sends, so that a copy it held can never
// overwrite a newer one. A condition the provider itself reports is the provider's, and sent.

// withOthersConditions is status with the conditions of target that neither the agent owns nor
// the provider reported, in target's order: status then equals target when only others wrote.
func withOthersConditions(status, target *corev1.PodStatus) *corev1.PodStatus {
	// A pod has a handful of conditions: scans, where maps of them cost two allocations on
	// every status write.
	conditions := make([]corev1.PodCondition, 0, len(status.Conditions)+len(target.Conditions))
	for _, c := range target.Conditions { // the API server's order: a merge keeps it
		if mine, ok := lastOfType(status.Conditions, c.Type); ok {
			conditions = append(conditions, mine)
		} else if !podstatus.IsOwned(c.Type) && !podstatus.IsTransient(c.Type) {
			conditions = append(conditions, c)
		}
	}
	for _, c := range status.Conditions {
		if _, placed := podstatus.Find(target.Conditions, c.Type); !placed {
			conditions = append(conditions, c)
		}
	}
	out := *status
	out.Conditions = conditions
	return &out
}

// endedConditions are the Transient conditions target holds that status no longer has: the
// status patch removes them (statusPatch).
func endedConditions(status, target *corev1.PodStatus) []corev1.PodConditionType {
	var out []corev1.PodConditionType
	for _, t := range podstatus.Transient {
		_, had := podstatus.Find(target.Conditions, t)
		if _, has := podstatus.Find(status.Conditions, t); had && !has {
			out = append(out, t)
		}
	}
	return out
}

// isEchoOf reports whether api, the API object's status, is written, what the agent last wrote
// of reported: the same, or the same but for conditions others changed after the write (a
// DisruptionTarget, a readiness gate's). Comparing with written alone, which holds others'
// conditions as they were when it was built, would never again find the echo once one of them
// changed, and the pod would never settle.
func isEchoOf(api, written, reported *corev1.PodStatus) bool {
	return sameStatus(api, written) ||
		sameStatus(api, withOthersConditions(withoutOthersConditions(written, reported), api))
}

// lastOfType is the last condition of type t in conds.
func lastOfType(conds []corev1.PodCondition, t corev1.PodConditionType) (corev1.PodCondition, bool) {
	for i := len(conds) - 1; i >= 0; i-- {
		if conds[i].Type == t {
			return conds[i], true
		}
	}
	return corev1.PodCondition{}, false
}

// withoutOthersConditions is status with only the conditions the agent owns or the provider
// reported: what is sent. It is status itself (not a copy) when all of them are: a pod with no
// condition of others, which is most.
func withoutOthersConditions(status, reported *corev1.PodStatus) *corev1.PodStatus {
	sent := func(c *corev1.PodCondition) bool {
		_, byProvider := podstatus.Find(reported.Conditions, c.Type)
		return podstatus.IsOwned(c.Type) || byProvider
	}
	all := true
	for i := range status.Conditions {
		if !sent(&status.Conditions[i]) {
			all = false
			break
		}
	}
	if all {
		return status
	}
	out := *status
	out.Conditions = nil
	for i := range status.Conditions {
		if sent(&status.Conditions[i]) {
			out.Conditions = append(out.Conditions, status.Conditions[i])
		}
	}
	return &out
}

// hasReadinessGates reports whether pod's Ready depends on conditions others set: a change of
// its status is then the provider's to know (an UpdatePod), as the kubelet syncs such a pod
// when its status changes (NeedToReconcilePodReadiness).
func hasReadinessGates(pod *corev1.Pod) bool { return len(pod.Spec.ReadinessGates) > 0 }

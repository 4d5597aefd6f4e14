package podstatus

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Owned are the pod condition types the node agent owns and writes, in the kubelet's order.
// Every other condition (a readiness gate's, set by a controller; DisruptionTarget) belongs to
// someone else and is kept as the API server holds it (kubetypes.PodConditionByKubelet).
var Owned = []corev1.PodConditionType{
	corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized,
	corev1.ContainersReady, corev1.PodReady,
}

// IsOwned reports whether a condition type is one the node agent owns.
func IsOwned(t corev1.PodConditionType) bool { return slices.Contains(Owned, t) }

// Transient are the pod condition types the node agent also owns but reports only while they
// hold — an in-place resize pending or in progress — and removes from the API object when it no
// longer reports them, as the kubelet's two-way status patch does.
var Transient = []corev1.PodConditionType{corev1.PodResizePending, corev1.PodResizeInProgress}

// IsTransient reports whether a condition type is one of Transient.
func IsTransient(t corev1.PodConditionType) bool { return slices.Contains(Transient, t) }

// Find returns the condition of type t in conds.
func Find(conds []corev1.PodCondition, t corev1.PodConditionType) (corev1.PodCondition, bool) {
	for _, c := range conds {
		if c.Type == t {
			return c, true
		}
	}
	return corev1.PodCondition{}, false
}

// TransitionTime is when c last changed, given the conditions reported before: the earlier
// transition time while c's status is unchanged (so that it records when the condition really
// changed), else c's own if it has one, else now.
func TransitionTime(c corev1.PodCondition, before []corev1.PodCondition, now metav1.Time) metav1.Time {
	if old, ok := Find(before, c.Type); ok && old.Status == c.Status {
		return old.LastTransitionTime
	}
	if !c.LastTransitionTime.IsZero() {
		return c.LastTransitionTime
	}
	return now
}

// Set sets condition typ of st to status and reason, its transition time moving only when its
// status changes.
func Set(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus, reason string, now metav1.Time) {
	c := corev1.PodCondition{Type: typ, Status: status, Reason: reason}
	c.LastTransitionTime = TransitionTime(c, st.Conditions, now)
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			st.Conditions[i] = c
			return
		}
	}
	if st.Conditions == nil {
		// Room for every owned condition at once: set one by one, the list grew 1, 2, 4, 8 —
		// three copies, and a backing array of 8 kept for 5 (about 400 B a pod, at 1000 pods).
		st.Conditions = make([]corev1.PodCondition, 0, len(Owned))
	}
	st.Conditions = append(st.Conditions, c)
}

func conditionStatus(ok bool) corev1.ConditionStatus {
	if ok {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

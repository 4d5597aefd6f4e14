// Package admission is the kubelet's GeneralPredicates (pkg/kubelet/lifecycle/predicate.go):
// whether a pod fits a node beside the pods the node already admitted, decided as the kubelet
// decides it, with its reasons and messages, and which pods a critical pod that does not fit
// may preempt (pkg/kubelet/preemption). It is pure: the node, the pods and the pod to admit
// in, the failures (or the pods to preempt) out; stopping pods is the caller's.
//
//	failures := admission.Check(logger, pod, node, admitted)
//	if len(failures) > 0 && eviction.IsCriticalPod(pod) {
//		victims, err := admission.Victims(pod, admitted, failures)
//		// stop the victims, then run pod; err: refuse it with failures[0]
//	}
//	if len(failures) > 0 {
//		refuse(failures[0].Reason(), failures[0].Message())
//	}
package admission

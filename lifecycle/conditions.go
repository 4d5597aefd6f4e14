package lifecycle

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/podstatus"
)

// podConditions are the conditions the kubelet owns, as its generateAPIPodStatus makes them
// (podstatus.Conditions), from the container statuses and phase already in s: the pod is ready
// to start containers while it has a sandbox and is not stopped; Ready reads the readiness
// gates' conditions from the pod as UpdatePod brought it (node: otherconditions.go keeps them).
func podConditions(st *podState, s *corev1.PodStatus, now metav1.Time) []corev1.PodCondition {
	return podstatus.Conditions(st.pod, s, st.sandboxID != "" && !st.stopped, st.status, now)
}

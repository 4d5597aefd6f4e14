package lifecycle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// Ready waits for every readiness gate's condition, which others set and UpdatePod brings;
// the lifecycle reports the conditions it owns only, never a copy of others'.
func TestReadinessGates(t *testing.T) {
	h := newHarness(t)
	const gate = corev1.PodConditionType("example.com/gate")
	pod := testPod("rg", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: gate}}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	ready := func() corev1.PodCondition { return condition(h.status(pod.UID), corev1.PodReady) }
	assert.Equal(t, corev1.ConditionTrue, condition(h.status(pod.UID), corev1.ContainersReady).Status)
	assert.Equal(t, corev1.ConditionFalse, ready().Status)
	assert.Equal(t, "ReadinessGatesNotReady", ready().Reason)
	assert.Equal(t, `corresponding condition of pod readiness gate "example.com/gate" does not exist.`, ready().Message)

	update := func(status corev1.ConditionStatus) {
		t.Helper()
		p := pod.DeepCopy()
		p.Status.Conditions = []corev1.PodCondition{{Type: gate, Status: status}, {Type: corev1.PodReady, Status: corev1.ConditionUnknown}}
		require.NoError(t, h.p.UpdatePod(context.Background(), p))
	}
	update(corev1.ConditionFalse)
	h.eventually(pod.UID, "the gate False", func(s *corev1.PodStatus) bool {
		return condition(s, corev1.PodReady).Message == `the status of pod readiness gate "example.com/gate" is not "True", but False`
	})
	update(corev1.ConditionTrue)
	h.eventually(pod.UID, "Ready", func(s *corev1.PodStatus) bool { return condition(s, corev1.PodReady).Status == corev1.ConditionTrue })
	for _, c := range h.status(pod.UID).Conditions {
		assert.NotEqual(t, gate, c.Type, "others' conditions are not reported")
	}
	update(corev1.ConditionFalse)
	h.eventually(pod.UID, "not Ready again", func(s *corev1.PodStatus) bool { return condition(s, corev1.PodReady).Status == corev1.ConditionFalse })
}

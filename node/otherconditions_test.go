package node

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const gate = corev1.PodConditionType("example.com/gate")

func cond(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s}
}

// What is compared holds others' conditions as the API server does, in its order; what is
// sent holds only the agent's and the provider's.
func TestOthersConditionsAreComparedNeverSent(t *testing.T) {
	api := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue), cond(gate, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionFalse),
	}}
	reported := &corev1.PodStatus{Conditions: []corev1.PodCondition{cond("provider.example.com/own", corev1.ConditionTrue)}}
	built := &corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionTrue), cond("provider.example.com/own", corev1.ConditionTrue),
	}}
	compared := withOthersConditions(built, api)
	assert.Equal(t, []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue), cond(gate, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionTrue),
		cond("provider.example.com/own", corev1.ConditionTrue),
	}, compared.Conditions)
	assert.Equal(t, corev1.PodRunning, compared.Phase)
	assert.Len(t, built.Conditions, 3, "built is not changed")

	sent := withoutOthersConditions(compared, reported)
	assert.Equal(t, []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionTrue), cond("provider.example.com/own", corev1.ConditionTrue),
	}, sent.Conditions, "the gate's condition is never sent")

	same := withOthersConditions(&corev1.PodStatus{Conditions: []corev1.PodCondition{
		cond(corev1.PodScheduled, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionFalse)}}, api)
	assert.True(t, sameStatus(api, same), "only others wrote: nothing to write")
}

// The echo of a write is found even when others changed their conditions after it: else the
// status writer would never settle the pod.
func TestEchoIsFoundAfterOthersChangedTheirConditions(t *testing.T) {
	reported := &corev1.PodStatus{Conditions: []corev1.PodCondition{cond("provider.example.com/own", corev1.ConditionTrue)}}
	written := &corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		cond(corev1.PodReady, corev1.ConditionTrue), cond(gate, corev1.ConditionFalse), cond("provider.example.com/own", corev1.ConditionTrue),
	}}
	api := written.DeepCopy()
	assert.True(t, isEchoOf(api, written, reported))

	api.Conditions[1].Status = corev1.ConditionTrue // the gate's controller
	api.Conditions = append(api.Conditions, cond(corev1.DisruptionTarget, corev1.ConditionTrue))
	assert.False(t, sameStatus(api, written))
	assert.True(t, isEchoOf(api, written, reported), "others' changes are theirs: still the echo")

	api.Conditions[0].Status = corev1.ConditionFalse // a condition the agent owns
	assert.False(t, isEchoOf(api, written, reported))
	api.Conditions[0].Status = corev1.ConditionTrue
	api.Conditions[2].Status = corev1.ConditionFalse // the provider's
	assert.False(t, isEchoOf(api, written, reported))
	api.Conditions[2].Status = corev1.ConditionTrue
	api.Phase = corev1.PodFailed
	assert.False(t, isEchoOf(api, written, reported))
}

// A readiness gate's condition changing is a change the provider is told of; other status
// changes are not.
func TestSpecDigestFollowsReadinessGateConditions(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: gate}}}}
	none := digestSpec(pod)
	pod.Status.Conditions = []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionFalse)}
	pod.Status.Phase = corev1.PodRunning
	assert.Equal(t, none, digestSpec(pod), "the agent's own conditions and phase")
	pod.Status.Conditions = append(pod.Status.Conditions, cond(gate, corev1.ConditionFalse))
	isFalse := digestSpec(pod)
	assert.NotEqual(t, none, isFalse)
	pod.Status.Conditions[1].Status = corev1.ConditionTrue
	assert.NotEqual(t, isFalse, digestSpec(pod))
	assert.True(t, hasReadinessGates(pod))
}

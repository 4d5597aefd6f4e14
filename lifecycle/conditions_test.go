package lifecycle

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func condition(s *corev1.PodStatus, t corev1.PodConditionType) corev1.PodCondition {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.PodCondition{}
}

// The upstream init container specs' invariant: while initialising, every container without
// an instance — later init containers and all main containers — waits with PodInitializing,
// and Initialized is False naming the init containers not done.
func TestInitializingPodWaitsWithPodInitializing(t *testing.T) {
	h := newHarness(t)
	pod := testPod("in1", corev1.RestartPolicyAlways, ctr("run1", "sleep", "1000"))
	pod.Spec.InitContainers = []corev1.Container{ctr("init1", "false"), ctr("init2", "true")}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))

	h.eventually(pod.UID, "init1 running", func(s *corev1.PodStatus) bool { return s.InitContainerStatuses[0].State.Running != nil })
	check := func(what string) {
		t.Helper()
		s := h.status(pod.UID)
		w := s.InitContainerStatuses[1].State.Waiting
		require.NotNil(t, w, "%s: init2 waits", what)
		assert.Equal(t, "PodInitializing", w.Reason, "%s: init2", what)
		w = mainState(s, 0).Waiting
		require.NotNil(t, w, "%s: run1 waits", what)
		assert.Equal(t, "PodInitializing", w.Reason, "%s: run1", what)
		init := condition(s, corev1.PodInitialized)
		assert.Equal(t, corev1.ConditionFalse, init.Status, what)
		assert.Equal(t, "ContainersNotInitialized", init.Reason, what)
		assert.Equal(t, "containers with incomplete status: [init1 init2]", init.Message, what)
		assert.False(t, init.LastTransitionTime.IsZero(), what)
		assert.Equal(t, corev1.PodPending, s.Phase, what)
	}
	check("init1 running")
	h.rt.exit(h.rt.running("init1"), 1)
	h.eventually(pod.UID, "init1 restarted", func(s *corev1.PodStatus) bool {
		return s.InitContainerStatuses[0].RestartCount == 1 && s.InitContainerStatuses[0].State.Running != nil
	})
	check("init1 restarted")

	h.rt.exit(h.rt.running("init1"), 0)
	h.eventually(pod.UID, "init2 running", func(s *corev1.PodStatus) bool { return s.InitContainerStatuses[1].State.Running != nil })
	assert.Equal(t, "containers with incomplete status: [init2]", condition(h.status(pod.UID), corev1.PodInitialized).Message)
	h.rt.exit(h.rt.running("init2"), 0)
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return mainState(s, 0).Running != nil })
	s := h.status(pod.UID)
	assert.Equal(t, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
		withoutTime(condition(s, corev1.PodInitialized)))
}

// A pod without init containers waits with ContainerCreating, and its ContainersReady and
// Ready say which containers are not ready, and then why a finished pod is not, as the
// kubelet's conditions do.
func TestConditionsNameWhatIsNotReady(t *testing.T) {
	h := newHarness(t)
	pod := testPod("in2", corev1.RestartPolicyNever, ctr("a", "sleep", "1000"), ctr("b", "sleep", "1000"))
	pod.Spec.Containers[1].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready"}}},
		PeriodSeconds: 1000, InitialDelaySeconds: 1000}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "both running", func(s *corev1.PodStatus) bool {
		return mainState(s, 0).Running != nil && mainState(s, 1).Running != nil
	})
	s := h.status(pod.UID)
	notReady := corev1.PodCondition{Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [b]"}
	notReady.Type = corev1.ContainersReady
	assert.Equal(t, notReady, withoutTime(condition(s, corev1.ContainersReady)))
	notReady.Type = corev1.PodReady
	assert.Equal(t, notReady, withoutTime(condition(s, corev1.PodReady)))
	assert.Equal(t, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}, withoutTime(condition(s, corev1.PodInitialized)))

	h.rt.exit(h.rt.running("a"), 0)
	h.rt.exit(h.rt.running("b"), 1)
	h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	s = h.status(pod.UID)
	assert.Equal(t, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "PodFailed"},
		withoutTime(condition(s, corev1.ContainersReady)))
	assert.Equal(t, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed"},
		withoutTime(condition(s, corev1.PodReady)))
}

func TestMainContainersWaitWithContainerCreatingWithoutInitContainers(t *testing.T) {
	st := &podState{pod: testPod("in3", corev1.RestartPolicyAlways, ctr("a", "x")), containers: map[string]*containerRecord{}, waiting: map[string]waitingReason{}}
	s := podStatus(st, statusInput{runtimeName: "fake"})
	assert.Equal(t, "ContainerCreating", mainState(s, 0).Waiting.Reason)
}

func withoutTime(c corev1.PodCondition) corev1.PodCondition {
	c.LastTransitionTime = c.LastProbeTime
	return c
}

// The upstream "should not start app containers and fail the pod if init containers fail on a
// RestartNever pod": Failed, Initialized False naming the failed init container, the main
// container still waiting with PodInitializing.
func TestFailedInitContainerOnARestartNeverPod(t *testing.T) {
	h := newHarness(t)
	pod := testPod("in4", corev1.RestartPolicyNever, ctr("run1", "sleep", "1000"))
	pod.Spec.InitContainers = []corev1.Container{ctr("init1", "true"), ctr("init2", "false")}
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "init1 running", func(s *corev1.PodStatus) bool { return s.InitContainerStatuses[0].State.Running != nil })
	h.rt.exit(h.rt.running("init1"), 0)
	h.eventually(pod.UID, "init2 running", func(s *corev1.PodStatus) bool { return s.InitContainerStatuses[1].State.Running != nil })
	h.rt.exit(h.rt.running("init2"), 1)
	h.eventually(pod.UID, "Failed", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodFailed })
	s := h.status(pod.UID)
	assert.Equal(t, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: "ContainersNotInitialized",
		Message: "containers with incomplete status: [init2]"}, withoutTime(condition(s, corev1.PodInitialized)))
	require.NotNil(t, mainState(s, 0).Waiting)
	assert.Equal(t, "PodInitializing", mainState(s, 0).Waiting.Reason)
	assert.True(t, s.InitContainerStatuses[0].Ready)
	assert.False(t, s.InitContainerStatuses[1].Ready)
}

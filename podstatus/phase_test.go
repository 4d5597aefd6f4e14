package podstatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestFinished(t *testing.T) {
	term := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
	run := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	for _, tc := range []struct {
		name             string
		status           *corev1.PodStatus
		terminal, finish bool
	}{
		{"nil", nil, false, false},
		{"succeeded", &corev1.PodStatus{Phase: corev1.PodSucceeded}, true, true},
		{"failed", &corev1.PodStatus{Phase: corev1.PodFailed}, true, true},
		{"running, no containers", &corev1.PodStatus{Phase: corev1.PodRunning}, false, false},
		{"all terminated", &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: term}, {State: term}}}, false, true},
		{"one running", &corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{State: term}, {State: run}}}, false, false},
	} {
		if got := IsTerminal(tc.status); got != tc.terminal {
			t.Errorf("%s: IsTerminal = %v, want %v", tc.name, got, tc.terminal)
		}
		if got := Finished(tc.status); got != tc.finish {
			t.Errorf("%s: Finished = %v, want %v", tc.name, got, tc.finish)
		}
	}
}

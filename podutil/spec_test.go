package podutil

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestIsSidecar(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *corev1.Container
		want bool
	}{
		{"nil", nil, false},
		{"no restart policy", &corev1.Container{}, false},
		{"restartPolicy Always", &corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}, true},
		{"restartPolicy OnFailure", &corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyOnFailure)}, false},
	} {
		if got := IsSidecar(tc.c); got != tc.want {
			t.Errorf("%s: IsSidecar = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  corev1.Pod
		want time.Duration
	}{
		{"API default", corev1.Pod{}, 30 * time.Second},
		{"the pod's own", corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](5)}}, 5 * time.Second},
		{"the deletion's before the pod's", corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{DeletionGracePeriodSeconds: ptr.To[int64](0)},
			Spec:       corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](5)},
		}, 0},
	} {
		if got := GracePeriod(&tc.pod); got != tc.want {
			t.Errorf("%s: GracePeriod = %v, want %v", tc.name, got, tc.want)
		}
	}
}

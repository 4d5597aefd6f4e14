package podstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestConditionsAsTheKubeletGeneratesThem(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(t0.Add(time.Hour))
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}, {Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
		Containers:     []corev1.Container{{Name: "app"}},
		ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}},
	}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	initDone := []corev1.ContainerStatus{
		{Name: "init", Ready: true, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}},
		{Name: "sidecar", Started: ptr.To(true), Ready: true, State: running},
	}
	for _, tc := range []struct {
		name   string
		held   []corev1.PodCondition
		status corev1.PodStatus
		want   map[corev1.PodConditionType]string // status/reason
	}{
		{
			name:   "init container running",
			status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: running}}},
			want: map[corev1.PodConditionType]string{
				corev1.PodInitialized: "False/" + ReasonContainersNotInitialized, corev1.ContainersReady: "False/" + ReasonContainersNotReady,
				corev1.PodReady: "False/" + ReasonContainersNotReady, corev1.PodScheduled: "True/",
			},
		},
		{
			name:   "containers ready, readiness gate missing",
			status: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running}}},
			want: map[corev1.PodConditionType]string{
				corev1.PodInitialized: "True/", corev1.ContainersReady: "True/", corev1.PodReady: "False/" + ReasonReadinessGatesNotReady,
			},
		},
		{
			name:   "readiness gate True",
			held:   []corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionTrue}},
			status: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: running}}},
			want:   map[corev1.PodConditionType]string{corev1.PodReady: "True/"},
		},
		{
			name:   "failed",
			status: corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: initDone},
			want:   map[corev1.PodConditionType]string{corev1.ContainersReady: "False/" + ReasonPodFailed, corev1.PodReady: "False/" + ReasonPodFailed},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod.DeepCopy()
			p.Status.Conditions = tc.held
			before := &corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t0}}}
			got := Conditions(p, &tc.status, true, before, now)
			if len(got) != len(Owned) {
				t.Fatalf("got %d conditions, want the %d owned ones: %+v", len(got), len(Owned), got)
			}
			for typ, want := range tc.want {
				c, _ := Find(got, typ)
				if s := string(c.Status) + "/" + c.Reason; s != want {
					t.Errorf("%s = %s, want %s (%s)", typ, s, want, c.Message)
				}
			}
			if c, _ := Find(got, corev1.PodScheduled); !c.LastTransitionTime.Equal(&t0) {
				t.Errorf("PodScheduled unchanged moved its transition time to %v", c.LastTransitionTime)
			}
			if c, _ := Find(got, corev1.PodInitialized); !c.LastTransitionTime.Equal(&now) {
				t.Errorf("Initialized, new, has transition time %v, want now", c.LastTransitionTime)
			}
		})
	}
}

func TestSetMovesTheTransitionTimeOnlyOnAChange(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	var st corev1.PodStatus
	Set(&st, corev1.PodReady, corev1.ConditionFalse, "", t0)
	Set(&st, corev1.PodReady, corev1.ConditionFalse, ReasonPodCompleted, t1)
	if c, _ := Find(st.Conditions, corev1.PodReady); len(st.Conditions) != 1 || !c.LastTransitionTime.Equal(&t0) || c.Reason != ReasonPodCompleted {
		t.Fatalf("unchanged status: %+v", st.Conditions)
	}
	Set(&st, corev1.PodReady, corev1.ConditionTrue, "", t1)
	if c, _ := Find(st.Conditions, corev1.PodReady); !c.LastTransitionTime.Equal(&t1) {
		t.Fatalf("changed status kept its transition time: %+v", st.Conditions)
	}
}

package node

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podstatus"
)

func TestBuildStatusConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	now := metav1.NewTime(t0.Add(time.Hour))
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}, {Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
		Containers:     []corev1.Container{{Name: "app"}},
	}
	running := func(ready bool) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "app", Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t1}}}
	}
	initDone := []corev1.ContainerStatus{
		{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		{Name: "sidecar", Started: ptr.To(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
	}
	for _, tc := range []struct {
		name     string
		current  corev1.PodStatus
		reported corev1.PodStatus
		want     map[corev1.PodConditionType]corev1.ConditionStatus
		wantLTT  map[corev1.PodConditionType]metav1.Time
	}{
		{
			name:     "derived from containers, times are now",
			reported: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{running(true)}},
			want: map[corev1.PodConditionType]corev1.ConditionStatus{
				corev1.PodScheduled: "True", corev1.PodReadyToStartContainers: "True", corev1.PodInitialized: "True",
				corev1.ContainersReady: "True", corev1.PodReady: "True",
			},
			wantLTT: map[corev1.PodConditionType]metav1.Time{corev1.PodReady: now, corev1.PodScheduled: now},
		},
		{
			name: "unchanged conditions keep the API's transition time",
			current: corev1.PodStatus{Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: "True", LastTransitionTime: t0},
				{Type: corev1.PodReady, Status: "False", LastTransitionTime: t0},
			}},
			reported: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{running(true)}},
			want:     map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodScheduled: "True", corev1.PodReady: "True"},
			wantLTT:  map[corev1.PodConditionType]metav1.Time{corev1.PodScheduled: t0, corev1.PodReady: now},
		},
		{
			name: "provider's own transition time is used when the status changes",
			reported: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{running(true)},
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: "True", LastTransitionTime: t1}}},
			want:    map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodReady: "True"},
			wantLTT: map[corev1.PodConditionType]metav1.Time{corev1.PodReady: t1},
		},
		{
			name:     "init container still running: not initialized, not ready",
			reported: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
			want:     map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodInitialized: "False", corev1.PodReady: "False", corev1.PodReadyToStartContainers: "True"},
		},
		{
			name:     "terminal pod is not ready",
			reported: corev1.PodStatus{Phase: corev1.PodSucceeded, InitContainerStatuses: initDone, ContainerStatuses: []corev1.ContainerStatus{running(true)}},
			want:     map[corev1.PodConditionType]corev1.ConditionStatus{corev1.PodReady: "False", corev1.ContainersReady: "False", corev1.PodReadyToStartContainers: "False"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildStatus(spec, &tc.current, &tc.reported, now)
			if len(got.Conditions) != len(podstatus.Owned) {
				t.Fatalf("got %d conditions, want the %d owned ones: %+v", len(got.Conditions), len(podstatus.Owned), got.Conditions)
			}
			for typ, want := range tc.want {
				c, _ := podstatus.Find(got.Conditions, typ)
				if c.Status != want {
					t.Errorf("%s = %s, want %s", typ, c.Status, want)
				}
			}
			for typ, want := range tc.wantLTT {
				c, _ := podstatus.Find(got.Conditions, typ)
				if !c.LastTransitionTime.Equal(&want) {
					t.Errorf("%s lastTransitionTime = %v, want %v", typ, c.LastTransitionTime, want)
				}
			}
		})
	}
}

func TestBuildStatusKeepsAPIFieldsTheProviderLeavesEmpty(t *testing.T) {
	start := metav1.Now()
	current := &corev1.PodStatus{QOSClass: corev1.PodQOSBestEffort, StartTime: &start, HostIP: "10.0.0.1", PodIP: "10.1.0.1"}
	got := buildStatus(&corev1.PodSpec{}, current, &corev1.PodStatus{Phase: corev1.PodRunning}, metav1.Now())
	if got.QOSClass != corev1.PodQOSBestEffort || got.StartTime == nil || got.HostIP != "10.0.0.1" || got.PodIP != "10.1.0.1" {
		t.Fatalf("fields lost: %+v", got)
	}
	got = buildStatus(&corev1.PodSpec{}, current, &corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.0.9"}, metav1.Now())
	if got.PodIP != "10.1.0.9" {
		t.Fatalf("provider's podIP not used: %q", got.PodIP)
	}
}

func TestSameStatus(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	running := func() *corev1.PodStatus {
		return &corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", Ready: true,
				State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}},
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
		}
	}
	for _, c := range []struct {
		name   string
		change func(*corev1.PodStatus)
		same   bool
	}{
		{"identical", func(*corev1.PodStatus) {}, true},
		{"the same instant in another location", func(s *corev1.PodStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(at.In(time.FixedZone("x", 3600)))
		}, true},
		{"empty and nil lists", func(s *corev1.PodStatus) { s.InitContainerStatuses = []corev1.ContainerStatus{} }, true},
		{"phase", func(s *corev1.PodStatus) { s.Phase = corev1.PodSucceeded }, false},
		{"condition status", func(s *corev1.PodStatus) { s.Conditions[0].Status = corev1.ConditionFalse }, false},
		{"transition time", func(s *corev1.PodStatus) { s.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(time.Second)) }, false},
		{"container state", func(s *corev1.PodStatus) {
			s.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
		}, false},
		{"resources", func(s *corev1.PodStatus) {
			s.ContainerStatuses[0].AllocatedResources[corev1.ResourceCPU] = resource.MustParse("2")
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := running(), running()
			c.change(b)
			if got := sameStatus(a, b); got != c.same {
				t.Errorf("sameStatus = %v, want %v", got, c.same)
			}
		})
	}
}

func TestKeyMutexExcludesOnlyTheSameKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m keyMutex
		m.lock("a")
		var sameKey, otherKey atomic.Bool
		go func() { m.lock("a"); sameKey.Store(true); m.unlock("a") }()
		go func() { m.lock("b"); otherKey.Store(true); m.unlock("b") }()
		synctest.Wait()
		if sameKey.Load() {
			t.Fatal("a second lock of the same key did not wait")
		}
		if !otherKey.Load() {
			t.Fatal("the lock of another key waited")
		}
		m.unlock("a")
		synctest.Wait()
		if !sameKey.Load() {
			t.Fatal("the waiting lock was not granted after unlock")
		}
	})
}

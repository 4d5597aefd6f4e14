package node

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

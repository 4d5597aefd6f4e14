package floor

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Containers:     []corev1.Container{{Name: "a", Image: "pause"}, {Name: "b", Image: "nginx"}},
		},
	}
}

func TestRunningStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	st := RunningStatus(testPod(), now)

	assert.Equal(t, corev1.PodRunning, st.Phase)
	require.NotNil(t, st.StartTime)
	assert.Equal(t, now, *st.StartTime)
	conds := map[corev1.PodConditionType]corev1.PodCondition{}
	for _, c := range st.Conditions {
		conds[c.Type] = c
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		require.Contains(t, conds, typ)
		assert.Equal(t, corev1.ConditionTrue, conds[typ].Status, typ)
		assert.Equal(t, now, conds[typ].LastTransitionTime, typ)
	}
	require.Len(t, st.ContainerStatuses, 2)
	for i, name := range []string{"a", "b"} {
		cs := st.ContainerStatuses[i]
		assert.Equal(t, name, cs.Name)
		assert.Equal(t, testPod().Spec.Containers[i].Image, cs.Image)
		assert.True(t, cs.Ready)
		require.NotNil(t, cs.State.Running, name)
		assert.Equal(t, now, cs.State.Running.StartedAt)
	}
	require.Len(t, st.InitContainerStatuses, 1)
	require.NotNil(t, st.InitContainerStatuses[0].State.Terminated)
	assert.Equal(t, int32(0), st.InitContainerStatuses[0].State.Terminated.ExitCode)
}

func TestStatusPatchCarriesUIDAndStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	data, err := statusPatch(testPod(), now)
	require.NoError(t, err)
	var got struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
		Status corev1.PodStatus `json:"status"`
	}
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, "uid-1", got.Metadata.UID)
	assert.Equal(t, corev1.PodRunning, got.Status.Phase)
	assert.Len(t, got.Status.ContainerStatuses, 2)
}

func TestDeduperWritesEachPodOnce(t *testing.T) {
	pending := testPod()
	running := testPod()
	running.Status.Phase = corev1.PodRunning
	terminating := running.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	failed := testPod()
	failed.UID = "uid-2"
	failed.Status.Phase = corev1.PodFailed

	d := newDeduper()
	steps := []struct {
		name       string
		pod        *corev1.Pod
		wantJob    bool
		wantDelete bool
	}{
		{"new pod: status patch", pending, true, false},
		{"same pod again before Running: nothing", pending, false, false},
		{"our own Running update: nothing", running, false, false},
		{"terminating: one DELETE", terminating, true, true},
		{"terminating again: nothing", terminating, false, false},
		{"a terminal pod: nothing", failed, false, false},
	}
	for _, s := range steps {
		j, ok := d.next(s.pod)
		assert.Equal(t, s.wantJob, ok, s.name)
		if ok {
			assert.Equal(t, s.wantDelete, j.kind == deletePod, s.name)
			assert.Equal(t, s.pod.UID, j.pod.UID, s.name)
		}
	}
	d.forget(pending.UID)
	_, ok := d.next(pending)
	assert.True(t, ok, "a pod forgotten and seen anew (same UID re-listed) is patched again")
}

package kubeletclient

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
)

var tableNow = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

func running(name string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func waiting(name, reason string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, RestartCount: restarts, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(name, reason string, code, signal int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code, Signal: signal}}}
}

func condition(t corev1.PodConditionType) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue}
}

// READY, STATUS and RESTARTS as kubectl get pods prints them (its printPod, v1.36) for the
// states a pod goes through.
func TestPodStatusColumns(t *testing.T) {
	one := corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}
	two := corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}
	withInit := corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init"}}, Containers: []corev1.Container{{Name: "main"}}}
	withSidecar := corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
		Containers:     []corev1.Container{{Name: "main"}},
	}
	crashed := waiting("main", "CrashLoopBackOff", 5)
	crashed.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(tableNow.Add(-2 * time.Minute))}
	sidecarStarted := running("sidecar", true)
	sidecarStarted.Started = ptr.To(true)

	for _, tc := range []struct {
		name                    string
		spec                    corev1.PodSpec
		status                  corev1.PodStatus
		deleting                bool
		ready, reason, restarts string
	}{
		{name: "pending, nothing reported", spec: one, status: corev1.PodStatus{Phase: corev1.PodPending},
			ready: "0/1", reason: "Pending", restarts: "0"},
		{name: "creating", spec: one, status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{waiting("main", "ContainerCreating", 0)}},
			ready: "0/1", reason: "ContainerCreating", restarts: "0"},
		{name: "running", spec: one, status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("main", true)}},
			ready: "1/1", reason: "Running", restarts: "0"},
		{name: "running, one of two ready", spec: two, status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", true), running("b", false)}},
			ready: "1/2", reason: "Running", restarts: "0"},
		{name: "crash loop", spec: one, status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{crashed}},
			ready: "0/1", reason: "CrashLoopBackOff", restarts: "5 (2m ago)"},
		{name: "completed", spec: one, status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminated("main", "Completed", 0, 0)}},
			ready: "0/1", reason: "Completed", restarts: "0"},
		{name: "error", spec: one, status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("main", "Error", 1, 0)}},
			ready: "0/1", reason: "Error", restarts: "0"},
		{name: "exit code without a reason", spec: one, status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("main", "", 3, 0)}},
			ready: "0/1", reason: "ExitCode:3", restarts: "0"},
		{name: "signal without a reason", spec: one, status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("main", "", 137, 9)}},
			ready: "0/1", reason: "Signal:9", restarts: "0"},
		{name: "one completed, one still running, not ready", spec: two, status: corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Completed", 0, 0), running("b", true)}},
			ready: "1/2", reason: "NotReady", restarts: "0"},
		{name: "one completed, one still running, ready", spec: two, status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{condition(corev1.PodReady)},
			ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Completed", 0, 0), running("b", true)}},
			ready: "1/2", reason: "Running", restarts: "0"},
		{name: "init running", spec: withInit, status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{running("init", false)}, ContainerStatuses: []corev1.ContainerStatus{waiting("main", "PodInitializing", 0)}},
			ready: "0/1", reason: "Init:0/1", restarts: "0"},
		{name: "init failed", spec: withInit, status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("init", "Error", 1, 0)}},
			ready: "0/1", reason: "Init:Error", restarts: "0"},
		{name: "init crash loop", spec: withInit, status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{waiting("init", "CrashLoopBackOff", 3)}},
			ready: "0/1", reason: "Init:CrashLoopBackOff", restarts: "3"},
		{name: "init done, main starting", spec: withInit, status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("init", "Completed", 0, 0)}, ContainerStatuses: []corev1.ContainerStatus{waiting("main", "PodInitializing", 0)}},
			ready: "0/1", reason: "PodInitializing", restarts: "0"},
		{name: "sidecar counted and ready", spec: withSidecar, status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:            []corev1.PodCondition{condition(corev1.PodInitialized), condition(corev1.PodReady)},
			InitContainerStatuses: []corev1.ContainerStatus{sidecarStarted}, ContainerStatuses: []corev1.ContainerStatus{running("main", true)}},
			ready: "2/2", reason: "Running", restarts: "0"},
		{name: "terminating", spec: one, deleting: true, status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("main", true)}},
			ready: "1/1", reason: "Terminating", restarts: "0"},
		{name: "deleted after it ended", spec: one, deleting: true, status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminated("main", "Completed", 0, 0)}},
			ready: "0/1", reason: "Completed", restarts: "0"},
		{name: "scheduling gated", spec: one, status: corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}},
			ready: "0/1", reason: "SchedulingGated", restarts: "0"},
		{name: "evicted", spec: one, status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"},
			ready: "0/1", reason: "Evicted", restarts: "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tc.spec, Status: tc.status}
			if tc.deleting {
				pod.DeletionTimestamp = &metav1.Time{Time: tableNow}
			}
			ready, reason, restarts := podStatusColumns(pod, tableNow)
			assert.Equal(t, []string{tc.ready, tc.reason, tc.restarts}, []string{ready, reason, restarts})
		})
	}
}

func TestPodSourceAndAge(t *testing.T) {
	file := map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource, podutil.ConfigFileAnnotationKey: "/etc/manifests/web.yaml"}
	url := map[string]string{podutil.ConfigSourceAnnotationKey: podutil.HTTPSource}
	for _, tc := range []struct {
		annotations map[string]string
		manifestURL string
		want        string
	}{
		{file, "", "/etc/manifests/web.yaml"},
		{map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource}, "", "file"},
		{url, "https://example.com/pods.yaml", "https://example.com/pods.yaml"},
		{url, "", "http"},
		{map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}, "", "api"},
		{nil, "", "api"},
	} {
		assert.Equal(t, tc.want, podSource(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}, tc.manifestURL), "%v", tc.annotations)
	}

	created := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tableNow.Add(-90 * time.Minute))}}
	assert.Equal(t, "90m", podAge(created, tableNow))
	seen := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		podutil.ConfigFirstSeenAnnotationKey: tableNow.Add(-3 * 24 * time.Hour).Format(time.RFC3339Nano)}}}
	assert.Equal(t, "3d", podAge(seen, tableNow), "a static pod without a mirror: when the agent first saw it")
	assert.Equal(t, "<unknown>", podAge(&corev1.Pod{}, tableNow))
}

func TestWritePodTable(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "web-node-a", CreationTimestamp: metav1.NewTime(tableNow.Add(-10 * time.Second)),
			Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: podutil.FileSource, podutil.ConfigFileAnnotationKey: "/m/web.yaml"}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("main", true)}},
	}
	var out bytes.Buffer
	require.NoError(t, writePodTable(&out, []podRow{podTableRow(pod, tableNow, "")}))
	assert.Equal(t, ""+
		"NAME                     READY   STATUS    RESTARTS   AGE   SOURCE\n"+
		"kube-system/web-node-a   1/1     Running   0          10s   /m/web.yaml\n", out.String())
}

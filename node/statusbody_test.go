package node

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// TestStatusPatchReplacesTheAddresses applies the status patch as the API server does (a
// strategic merge) to a pod that holds other addresses: the patch's addresses replace them —
// merged by ip, an IPv4 address beside another is refused by the API server ("may specify no
// more than one IP for each IP family") — while a status without addresses keeps the pod's,
// and conditions others set stay.
func TestStatusPatchReplacesTheAddresses(t *testing.T) {
	held := corev1.PodStatus{
		PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
		HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
		Conditions: []corev1.PodCondition{
			{Type: "example.com/gate", Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		},
	}
	for _, c := range []struct {
		name    string
		status  corev1.PodStatus
		podIPs  []corev1.PodIP
		hostIPs []corev1.HostIP
	}{
		{"new addresses", corev1.PodStatus{
			PodIP: "10.244.0.4", PodIPs: []corev1.PodIP{{IP: "10.244.0.4"}},
			HostIP: "10.0.0.2", HostIPs: []corev1.HostIP{{IP: "10.0.0.2"}},
		}, []corev1.PodIP{{IP: "10.244.0.4"}}, []corev1.HostIP{{IP: "10.0.0.2"}}},
		{"dual stack, then the same", corev1.PodStatus{
			PodIP: "10.244.0.4", PodIPs: []corev1.PodIP{{IP: "10.244.0.4"}, {IP: "fd00::4"}},
			HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
		}, []corev1.PodIP{{IP: "10.244.0.4"}, {IP: "fd00::4"}}, []corev1.HostIP{{IP: "10.0.0.1"}}},
		{"no addresses yet", corev1.PodStatus{},
			[]corev1.PodIP{{IP: "127.0.0.1"}}, []corev1.HostIP{{IP: "10.0.0.1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1"}, Status: held}
			original, err := json.Marshal(pod)
			require.NoError(t, err)
			patch, err := statusPatch("u1", &c.status)
			require.NoError(t, err)
			merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.Pod{})
			require.NoError(t, err, "patch %s", patch)
			var got corev1.Pod
			require.NoError(t, json.Unmarshal(merged, &got))
			assert.Equal(t, c.podIPs, got.Status.PodIPs, "patch %s", patch)
			assert.Equal(t, c.hostIPs, got.Status.HostIPs)
			assert.Equal(t, c.podIPs[0].IP, got.Status.PodIP)
			assert.Equal(t, []corev1.PodCondition{
				{Type: "example.com/gate", Status: corev1.ConditionTrue},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			}, got.Status.Conditions, "conditions merge by type")
		})
	}
}

// TestStatusPatchRemovesEndedResizeConditions: a resize condition the API object holds and the
// provider no longer reports (the resize done) is removed by the patch, as the kubelet's two-way
// patch removes it, while the conditions others set stay and the node's own are written.
func TestStatusPatchRemovesEndedResizeConditions(t *testing.T) {
	held := corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: "example.com/gate", Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, ObservedGeneration: 2},
		{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred},
	}}
	reported := &corev1.PodStatus{Conditions: []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible},
	}}
	status := withOthersConditions(reported, &held)
	assert.NotContains(t, status.Conditions, held.Conditions[2], "compared without the ended condition")
	ended := endedConditions(status, &held)
	assert.Equal(t, []corev1.PodConditionType{corev1.PodResizeInProgress}, ended)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1"}, Status: held}
	original, err := json.Marshal(pod)
	require.NoError(t, err)
	patch, err := statusPatch("u1", withoutOthersConditions(status, reported), ended...)
	require.NoError(t, err)
	merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.Pod{})
	require.NoError(t, err, "patch %s", patch)
	var got corev1.Pod
	require.NoError(t, json.Unmarshal(merged, &got))
	assert.Equal(t, []corev1.PodCondition{
		{Type: "example.com/gate", Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible},
	}, got.Status.Conditions, "patch %s", patch)
}

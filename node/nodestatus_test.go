package node

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var statusEpoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func desiredTestNode() *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"kubernetes.io/hostname": "node-a", "tier": "edge"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "vk", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:        corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("4")},
			Allocatable:     corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceCPU: resource.MustParse("4")},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "node-a"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.36.3-vk", OperatingSystem: "linux", Architecture: "amd64"},
		},
	}
	n.Status.Conditions = withDefaultConditions(nil)
	return n
}

func condition(n *corev1.Node, typ corev1.NodeConditionType) corev1.NodeCondition {
	c := findNodeCondition(n.Status.Conditions, typ)
	if c == nil {
		return corev1.NodeCondition{}
	}
	return *c
}

func TestNodeForCreateStampsConditions(t *testing.T) {
	n := nodeForCreate(desiredTestNode(), statusEpoch)
	require.Len(t, n.Status.Conditions, 4)
	for _, c := range n.Status.Conditions {
		assert.Equal(t, statusEpoch, c.LastHeartbeatTime.Time, c.Type)
		assert.Equal(t, statusEpoch, c.LastTransitionTime.Time, c.Type)
	}
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
	assert.Equal(t, corev1.ConditionFalse, condition(n, corev1.NodeMemoryPressure).Status)
}

func TestWithDefaultConditionsKeepsTheCallers(t *testing.T) {
	conds := withDefaultConditions([]corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}})
	assert.Len(t, conds, 4)
	assert.Equal(t, corev1.ConditionTrue, findNodeCondition(conds, corev1.NodeDiskPressure).Status)
}

func TestWithPingResult(t *testing.T) {
	conds := withDefaultConditions(nil)
	assert.Equal(t, conds, withPingResult(conds, nil))

	failing := withPingResult(conds, errors.New("backend down"))
	ready := findNodeCondition(failing, corev1.NodeReady)
	assert.Equal(t, corev1.ConditionFalse, ready.Status)
	assert.Equal(t, ReasonProviderFailed, ready.Reason)
	assert.Contains(t, ready.Message, "backend down")
	assert.Equal(t, corev1.ConditionTrue, findNodeCondition(conds, corev1.NodeReady).Status, "input not modified")
}

// serverNode is desiredTestNode as the API server holds it after registration, plus what
// other actors added: a label, a condition, an extended resource.
func serverNode() *corev1.Node {
	n := nodeForCreate(desiredTestNode(), statusEpoch)
	n.UID, n.ResourceVersion = "uid-1", "7"
	n.Labels["team"] = "admins"
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{
		Type: "NetworkUnavailable", Status: corev1.ConditionFalse, Reason: "RouteCreated",
		LastHeartbeatTime: metav1.NewTime(statusEpoch), LastTransitionTime: metav1.NewTime(statusEpoch),
	})
	n.Status.Capacity["example.com/dongle"] = resource.MustParse("2")
	return n
}

func TestApplyOwnedFields(t *testing.T) {
	later := statusEpoch.Add(time.Minute)
	for _, tc := range []struct {
		name        string
		desired     func(*corev1.Node)
		heartbeat   bool
		wantChanged bool
		check       func(t *testing.T, server, got *corev1.Node)
	}{{
		name:        "nothing changed",
		wantChanged: false,
		check: func(t *testing.T, server, got *corev1.Node) {
			assert.Equal(t, server, got)
		},
	}, {
		name:        "heartbeat only",
		heartbeat:   true,
		wantChanged: false,
		check: func(t *testing.T, server, got *corev1.Node) {
			for _, typ := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
				assert.Equal(t, later, condition(got, typ).LastHeartbeatTime.Time, typ)
				assert.Equal(t, statusEpoch, condition(got, typ).LastTransitionTime.Time, typ)
			}
			assert.Equal(t, statusEpoch, condition(got, "NetworkUnavailable").LastHeartbeatTime.Time, "not ours")
		},
	}, {
		name: "ready flips",
		desired: func(n *corev1.Node) {
			n.Status.Conditions = withPingResult(n.Status.Conditions, errors.New("down"))
		},
		wantChanged: true,
		check: func(t *testing.T, server, got *corev1.Node) {
			ready := condition(got, corev1.NodeReady)
			assert.Equal(t, corev1.ConditionFalse, ready.Status)
			assert.Equal(t, later, ready.LastTransitionTime.Time)
			assert.Equal(t, later, ready.LastHeartbeatTime.Time)
			assert.Equal(t, statusEpoch, condition(got, corev1.NodeMemoryPressure).LastTransitionTime.Time)
			assert.Equal(t, later, condition(got, corev1.NodeMemoryPressure).LastHeartbeatTime.Time, "a write refreshes every owned heartbeat")
		},
	}, {
		name: "message change keeps transition time",
		desired: func(n *corev1.Node) {
			findNodeCondition(n.Status.Conditions, corev1.NodeReady).Message = "still fine"
		},
		wantChanged: true,
		check: func(t *testing.T, server, got *corev1.Node) {
			assert.Equal(t, "still fine", condition(got, corev1.NodeReady).Message)
			assert.Equal(t, statusEpoch, condition(got, corev1.NodeReady).LastTransitionTime.Time)
		},
	}, {
		name: "capacity and labels change, foreign ones stay",
		desired: func(n *corev1.Node) {
			n.Status.Capacity[corev1.ResourcePods] = resource.MustParse("200")
			n.Labels["tier"] = "core"
		},
		wantChanged: true,
		check: func(t *testing.T, server, got *corev1.Node) {
			assert.Equal(t, "200", got.Status.Capacity.Pods().String())
			assert.Equal(t, "2", got.Status.Capacity.Name("example.com/dongle", resource.DecimalSI).String())
			assert.Equal(t, "core", got.Labels["tier"])
			assert.Equal(t, "admins", got.Labels["team"])
			assert.Equal(t, corev1.ConditionFalse, condition(got, "NetworkUnavailable").Status)
		},
	}, {
		name: "kubelet endpoint withdrawn",
		desired: func(n *corev1.Node) {
			n.Status.DaemonEndpoints = corev1.NodeDaemonEndpoints{}
		},
		wantChanged: true,
		check: func(t *testing.T, server, got *corev1.Node) {
			assert.Equal(t, int32(0), got.Status.DaemonEndpoints.KubeletEndpoint.Port, "no port advertised that nothing serves")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			server, desired := serverNode(), desiredTestNode()
			if tc.desired != nil {
				tc.desired(desired)
			}
			before := server.DeepCopy()
			got, changed := applyOwnedFields(server, desired, later, tc.heartbeat)
			assert.Equal(t, tc.wantChanged, changed)
			assert.Equal(t, before, server, "server node not modified")
			tc.check(t, server, got)
		})
	}
}

func TestNodeStatusPatchNamesOnlyWhatChanged(t *testing.T) {
	server, desired := serverNode(), desiredTestNode()
	desired.Status.Conditions = withPingResult(desired.Status.Conditions, errors.New("down"))
	updated, changed := applyOwnedFields(server, desired, statusEpoch.Add(time.Minute), false)
	require.True(t, changed)
	patch, err := nodeStatusPatch(server, updated)
	require.NoError(t, err)

	var shape struct {
		Metadata map[string]any `json:"metadata"`
		Status   struct {
			Conditions []map[string]any `json:"conditions"`
			Capacity   map[string]any   `json:"capacity"`
			Addresses  []any            `json:"addresses"`
		} `json:"status"`
		Spec map[string]any `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(patch, &shape), string(patch))
	assert.Nil(t, shape.Metadata, "labels unchanged: %s", patch)
	assert.Nil(t, shape.Spec, "taints are never patched: %s", patch)
	assert.Nil(t, shape.Status.Capacity, patch)
	assert.Nil(t, shape.Status.Addresses, patch)
	types := map[any]map[string]any{}
	for _, c := range shape.Status.Conditions {
		types[c["type"]] = c
	}
	assert.NotContains(t, types, "NetworkUnavailable", "a foreign condition is never in the patch: %s", patch)
	require.Contains(t, types, "Ready", string(patch))
	assert.Equal(t, "False", types["Ready"]["status"])
	assert.Len(t, types, 4, "Ready changed, and every owned heartbeat moved: %s", patch)
}

func TestMergeProviderNode(t *testing.T) {
	desired := desiredTestNode()
	mergeProviderNode(desired, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"provider": "mock"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue, Reason: "Full"}, {Type: "GPUHealthy", Status: corev1.ConditionTrue}},
			Capacity:   corev1.ResourceList{corev1.ResourcePods: resource.MustParse("50")},
		},
	})
	assert.Equal(t, "mock", desired.Labels["provider"])
	assert.Equal(t, "edge", desired.Labels["tier"])
	assert.Equal(t, corev1.ConditionTrue, condition(desired, corev1.NodeMemoryPressure).Status)
	assert.Equal(t, corev1.ConditionTrue, condition(desired, "GPUHealthy").Status)
	assert.Equal(t, "50", desired.Status.Capacity.Pods().String())
	assert.Equal(t, "4", desired.Status.Allocatable.Cpu().String(), "allocatable not reported: kept")
	assert.Len(t, desired.Status.Addresses, 2)
}

func TestSetNodeOwner(t *testing.T) {
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Thing", Name: "x", UID: "t"}
	refs := setNodeOwner([]metav1.OwnerReference{other, {APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "old"}}, "node-a", "new")
	assert.Equal(t, []metav1.OwnerReference{other, {APIVersion: "v1", Kind: "Node", Name: "node-a", UID: "new"}}, refs)
}

package node

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The node's status is computed here without I/O: the NodeController owns some fields of the
// Node (those its caller and provider set) and writes only those, as a strategic-merge patch
// against what the API server holds, so labels, conditions and capacity set by others survive.

// Reasons the NodeController gives its Ready condition.
const (
	ReasonReady          = "KubeletReady"
	ReasonProviderFailed = "ProviderPingFailed"
)

// defaultNodeConditions are the conditions a node reports when its caller and provider set
// none of these types: ready, and no memory, disk or PID pressure.
func defaultNodeConditions() []corev1.NodeCondition {
	return []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: ReasonReady, Message: "vk-static is posting ready status"},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "vk-static has sufficient memory available"},
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "vk-static has no disk pressure"},
		{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "vk-static has sufficient PID available"},
	}
}

// withDefaultConditions returns conds plus every default condition whose type conds lacks.
func withDefaultConditions(conds []corev1.NodeCondition) []corev1.NodeCondition {
	out := append([]corev1.NodeCondition(nil), conds...)
	for _, d := range defaultNodeConditions() {
		if findNodeCondition(out, d.Type) == nil {
			out = append(out, d)
		}
	}
	return out
}

// withPingResult overrides the Ready condition while the provider's Ping fails: a node whose
// provider cannot run pods must not claim to be ready.
func withPingResult(conds []corev1.NodeCondition, pingErr error) []corev1.NodeCondition {
	if pingErr == nil {
		return conds
	}
	out := append([]corev1.NodeCondition(nil), conds...)
	ready := findNodeCondition(out, corev1.NodeReady)
	if ready == nil {
		out = append(out, corev1.NodeCondition{Type: corev1.NodeReady})
		ready = &out[len(out)-1]
	}
	ready.Status, ready.Reason = corev1.ConditionFalse, ReasonProviderFailed
	ready.Message = fmt.Sprintf("provider ping failed: %v", pingErr)
	return out
}

func findNodeCondition(conds []corev1.NodeCondition, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// mergeProviderNode folds what the provider reported into desired: its conditions (by type),
// capacity, allocatable, addresses and labels. Taints, nodeInfo and daemon endpoints remain
// the caller's.
func mergeProviderNode(desired, reported *corev1.Node) {
	for _, c := range reported.Status.Conditions {
		if existing := findNodeCondition(desired.Status.Conditions, c.Type); existing != nil {
			*existing = c
		} else {
			desired.Status.Conditions = append(desired.Status.Conditions, c)
		}
	}
	if len(reported.Status.Capacity) > 0 {
		desired.Status.Capacity = reported.Status.Capacity.DeepCopy()
	}
	if len(reported.Status.Allocatable) > 0 {
		desired.Status.Allocatable = reported.Status.Allocatable.DeepCopy()
	}
	if len(reported.Status.Addresses) > 0 {
		desired.Status.Addresses = append([]corev1.NodeAddress(nil), reported.Status.Addresses...)
	}
	for k, v := range reported.Labels {
		if desired.Labels == nil {
			desired.Labels = map[string]string{}
		}
		desired.Labels[k] = v
	}
}

// nodeForCreate is the Node to register: desired with every condition stamped now.
func nodeForCreate(desired *corev1.Node, now time.Time) *corev1.Node {
	n := desired.DeepCopy()
	n.ResourceVersion, n.UID = "", ""
	t := metav1.NewTime(now)
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].LastHeartbeatTime = t
		n.Status.Conditions[i].LastTransitionTime = t
	}
	return n
}

// applyOwnedFields returns server with the fields the controller owns taken from desired, and
// whether that is worth a write. Owned: desired's labels (others are kept), its capacity and
// allocatable entries (others are kept), its daemon endpoints even when unset (the kubelet
// port an earlier run advertised must go when this one serves no kubelet API), its addresses
// and nodeInfo when set, its images once listed (an empty list too: non-nil), and its
// conditions by type (others are kept). A condition's lastTransitionTime moves only when its
// status changes. changed reports whether an owned field differs (heartbeats aside); when it
// does, or heartbeat is set, every owned condition's lastHeartbeatTime becomes now.
func applyOwnedFields(server, desired *corev1.Node, now time.Time, heartbeat bool) (n *corev1.Node, changed bool) {
	n = server.DeepCopy()
	t := metav1.NewTime(now)
	for k, v := range desired.Labels {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[k] = v
	}
	n.Status.Capacity = mergeResources(n.Status.Capacity, desired.Status.Capacity)
	n.Status.Allocatable = mergeResources(n.Status.Allocatable, desired.Status.Allocatable)
	if len(desired.Status.Addresses) > 0 {
		n.Status.Addresses = append([]corev1.NodeAddress(nil), desired.Status.Addresses...)
	}
	n.Status.DaemonEndpoints = desired.Status.DaemonEndpoints
	if desired.Status.NodeInfo != (corev1.NodeSystemInfo{}) {
		n.Status.NodeInfo = desired.Status.NodeInfo
	}
	if desired.Status.Images != nil {
		n.Status.Images = desired.Status.Images
	}
	for _, d := range desired.Status.Conditions {
		c := findNodeCondition(n.Status.Conditions, d.Type)
		if c == nil {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: d.Type, LastTransitionTime: t})
			c = &n.Status.Conditions[len(n.Status.Conditions)-1]
		}
		if c.Status != d.Status {
			c.LastTransitionTime = t
		}
		c.Status, c.Reason, c.Message = d.Status, d.Reason, d.Message
	}
	changed = !apiequality.Semantic.DeepEqual(server, n)
	if changed || heartbeat {
		for _, d := range desired.Status.Conditions {
			findNodeCondition(n.Status.Conditions, d.Type).LastHeartbeatTime = t
		}
	}
	return n, changed
}

func mergeResources(into, from corev1.ResourceList) corev1.ResourceList {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = corev1.ResourceList{}
	}
	for name, q := range from {
		into[name] = q.DeepCopy()
	}
	return into
}

// nodeStatusPatch is the strategic-merge patch that turns server into updated: conditions merge
// by type, so the patch names only the conditions that changed.
func nodeStatusPatch(server, updated *corev1.Node) ([]byte, error) {
	before, err := json.Marshal(server)
	if err != nil {
		return nil, fmt.Errorf("marshal node: %w", err)
	}
	after, err := json.Marshal(updated)
	if err != nil {
		return nil, fmt.Errorf("marshal node: %w", err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(before, after, corev1.Node{})
	if err != nil {
		return nil, fmt.Errorf("node status patch: %w", err)
	}
	return patch, nil
}

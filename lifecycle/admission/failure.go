package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// The predicates' names, the refusal's reason for each (the kubelet's scheduler plugin names),
// and what the message says of each (the scheduler's ErrReason strings).
const (
	NodeAffinity    = "NodeAffinity"
	NodeName        = "NodeName"
	NodePorts       = "NodePorts"
	TaintToleration = "TaintToleration"

	descNodeAffinity    = "node(s) didn't match Pod's node affinity/selector"
	descNodeName        = "node(s) didn't match the requested node name"
	descNodePorts       = "node(s) didn't have free ports for the requested pod ports"
	descTaintToleration = "node(s) had taints that the pod didn't tolerate"
)

// Failure is one predicate a pod fails: a resource it needs more of than is left (Resource
// set), or a predicate of the node that it does not meet (Predicate set).
type Failure struct {
	// Resource is the resource short of what the pod requests: Requested is the pod's request,
	// Used the admitted pods' requests, Capacity the node's allocatable, in the kubelet's units
	// (millicores for cpu, a count for pods, bytes or units for the rest).
	Resource                  corev1.ResourceName
	Requested, Used, Capacity int64
	// Predicate is the predicate failed (NodeAffinity, NodeName, NodePorts, TaintToleration)
	// and Desc what it says.
	Predicate, Desc string
}

// Reason is the pod status's reason for a pod refused for f, as the kubelet gives it:
// "OutOf<resource>" (OutOfcpu, OutOfmemory, OutOfpods, OutOfephemeral-storage,
// OutOfexample.com/gpu), or the predicate's name.
func (f Failure) Reason() string {
	if f.Resource != "" {
		return "OutOf" + string(f.Resource)
	}
	return f.Predicate
}

// Message is the kubelet's message for f.
func (f Failure) Message() string {
	if f.Resource != "" {
		return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			f.Resource, f.Requested, f.Used, f.Capacity)
	}
	return fmt.Sprintf("Predicate %s failed: %s", f.Predicate, f.Desc)
}

// shortfall is how much of f's resource is missing for the pod to fit.
func (f Failure) shortfall() int64 { return f.Requested - (f.Capacity - f.Used) }

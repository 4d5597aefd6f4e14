package mock

import (
	"context"
	"runtime"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/provider"
)

// NodeProvider is the node half of the mock, a provider.NodeProvider whose Ping result and
// status reports the caller sets. Provider embeds one; a test of the node controller alone uses
// it by itself. The zero value is healthy and has no callback.
type NodeProvider struct {
	mu       sync.Mutex
	pingErr  error
	callback func(*corev1.Node)
}

var _ provider.NodeProvider = (*NodeProvider)(nil)

// Ping reports the error set with SetPingError, nil by default.
func (n *NodeProvider) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pingErr
}

// SetPingError makes Ping fail with err (nil: healthy again), to simulate a broken backend.
func (n *NodeProvider) SetPingError(err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pingErr = err
}

// NotifyNodeStatus registers cb; ReportNodeStatus calls it.
func (n *NodeProvider) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.callback = cb
}

// ReportNodeStatus hands node to the NotifyNodeStatus callback (if any) on the calling
// goroutine, to simulate a change of the node's health or capacity.
func (n *NodeProvider) ReportNodeStatus(node *corev1.Node) {
	n.mu.Lock()
	cb := n.callback
	n.mu.Unlock()
	if cb != nil {
		cb(node)
	}
}

// Capacity is the simulated node's capacity (and allocatable): cpu, memory and pods.
func (p *Provider) Capacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    p.cfg.CPU.DeepCopy(),
		corev1.ResourceMemory: p.cfg.Memory.DeepCopy(),
		corev1.ResourcePods:   p.cfg.Pods.DeepCopy(),
	}
}

// ProviderTaintKey is the key of the taint a simulated node carries, as virtual-kubelet names
// it; its value is the provider's name.
const ProviderTaintKey = "virtual-kubelet.io/provider"

// Taint is the taint ConfigureNode gives the node: virtual-kubelet.io/provider=mock:NoSchedule.
// The simulator runs nothing, yet its node is Ready with room for pods and reports every pod
// Running: untainted, it would attract real workloads (the scheduler's, every DaemonSet's) that
// would only appear to run. Tests and benchmarks that bind pods with spec.nodeName bypass the
// scheduler, and static pods are never scheduled, so the taint keeps neither off the node.
func Taint() corev1.Taint {
	return corev1.Taint{Key: ProviderTaintKey, Value: "mock", Effect: corev1.TaintEffectNoSchedule}
}

// ConfigureNode fills node's capacity, allocatable and InternalIP address, and adds
// Taint unless node already has a taint with its key and effect (the API server rejects two),
// leaving what the caller already set in place (labels, other taints, nodeInfo, daemon
// endpoints). The conditions are the node controller's: Ready, and no memory, disk or PID
// pressure, as long as Ping succeeds.
func (p *Provider) ConfigureNode(node *corev1.Node) {
	if !hasTaint(node, Taint()) {
		node.Spec.Taints = append(node.Spec.Taints, Taint())
	}
	node.Status.Capacity = p.Capacity()
	node.Status.Allocatable = p.Capacity()
	if !hasAddress(node, corev1.NodeInternalIP) {
		node.Status.Addresses = append(node.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: p.cfg.InternalIP})
	}
	if node.Status.NodeInfo.OperatingSystem == "" {
		node.Status.NodeInfo.OperatingSystem = runtime.GOOS
	}
	if node.Status.NodeInfo.Architecture == "" {
		node.Status.NodeInfo.Architecture = runtime.GOARCH
	}
}

// hasTaint reports whether node has a taint with want's key and effect.
func hasTaint(node *corev1.Node, want corev1.Taint) bool {
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].MatchTaint(&want) {
			return true
		}
	}
	return false
}

func hasAddress(node *corev1.Node, typ corev1.NodeAddressType) bool {
	for _, a := range node.Status.Addresses {
		if a.Type == typ {
			return true
		}
	}
	return false
}

package lifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/node/health"
)

// A Runtime that also implements health.Checker (Status: CRI's RuntimeService.Status, the
// process backend's own checks) has the Node's Ready condition follow it, as the kubelet's
// runtime state does (package health): the Provider is then a node.NodeProvider whose Ping
// never fails — the Lease is the agent's liveness — and whose NotifyNodeStatus reports Ready
// False with the kubelet's message while the runtime is down or not ready. Running containers
// are never touched for it: when the runtime is back, the node is Ready again.

var _ node.NodeProvider = (*Provider)(nil)

// newHealthMonitor is the monitor of cfg.Runtime's health; nil for a runtime that reports none.
func newHealthMonitor(cfg Config) *health.Monitor {
	checker, ok := cfg.Runtime.(health.Checker)
	if !ok {
		return nil
	}
	return health.NewMonitor(health.Config{
		Checker:   checker,
		Period:    cfg.RuntimeStatusPeriod,
		Threshold: cfg.RuntimeStatusThreshold,
		Clock:     cfg.Clock,
	})
}

// Ping never fails: the agent answers. The runtime's health is the Ready condition's.
func (p *Provider) Ping(context.Context) error { return nil }

// NotifyNodeStatus registers cb for the Node conditions the provider computes: Ready from the
// runtime's health. A runtime that reports no health leaves Ready to the node controller.
func (p *Provider) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	if p.health != nil {
		p.health.NotifyNodeStatus(ctx, cb)
	}
}

// RuntimeHealth says why the runtime cannot run containers, in the words of the Node's Ready
// condition but leaving the pod network out as the kubelet's sync loop does (for /healthz and
// /readyz); nil when it can, or when the runtime reports no health.
func (p *Provider) RuntimeHealth() error {
	if p.health == nil {
		return nil
	}
	return p.health.RuntimeErr()
}

// runHealth follows the runtime's health until ctx ends.
func (p *Provider) runHealth(ctx context.Context) {
	if p.health != nil {
		_ = p.health.Run(ctx)
	}
}

// The defaults of Config.RuntimeStatusPeriod and Config.RuntimeStatusThreshold, the kubelet's.
const (
	DefaultRuntimeStatusPeriod    = health.DefaultPeriod
	DefaultRuntimeStatusThreshold = health.DefaultThreshold
)

package lifecycle

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle/health"
	"github.com/vk-static/vk-static/provider"
)

// A Runtime that also implements health.Checker (Status: CRI's RuntimeService.Status, the
// process backend's own checks) has the Node's Ready condition follow it, as the kubelet's
// runtime state does (package health): the Provider is then a provider.NodeProvider whose Ping
// never fails — the Lease is the agent's liveness — and whose NotifyNodeStatus reports Ready
// False with the kubelet's message while the runtime is down or not ready. Running containers
// are never touched for it: when the runtime is back, the node is Ready again.

var _ provider.NodeProvider = (*Provider)(nil)

// newHealthMonitor is the monitor of cfg.Runtime's health, with notReady's reasons too (the
// node shutdown's); nil for a runtime that reports none.
func newHealthMonitor(cfg Config, notReady func() error) *health.Monitor {
	checker, ok := cfg.Runtime.(HealthChecker)
	if !ok {
		return nil
	}
	return health.NewMonitor(health.Config{
		Checker:   checker,
		Period:    cfg.RuntimeStatusPeriod,
		Threshold: cfg.RuntimeStatusThreshold,
		Clock:     cfg.Clock,
		NotReady:  notReady,
	})
}

// Ping never fails: the agent answers. The runtime's health is the Ready condition's.
func (p *Provider) Ping(context.Context) error { return nil }

// NotifyNodeStatus registers cb for the Node conditions the provider computes: Ready from the
// runtime's health, and the pressure conditions with Config.Eviction. A runtime that reports
// no health leaves Ready to the node controller.
func (p *Provider) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	if p.health != nil {
		p.health.NotifyNodeStatus(ctx, cb)
	}
	if m := p.evictionManager(); m != nil {
		m.NotifyNodeStatus(ctx, cb)
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

// runHealth follows the runtime's health and the node's eviction signals, and watches for the
// host's shutdown, until ctx ends.
func (p *Provider) runHealth(ctx context.Context) {
	var wg sync.WaitGroup
	if p.health != nil {
		wg.Go(func() { _ = p.health.Run(ctx) })
	}
	if m := p.evictionManager(); m != nil {
		wg.Go(func() { _ = m.Run(ctx) })
	}
	if p.shutdown != nil {
		wg.Go(func() { _ = p.shutdown.Run(ctx) })
	}
	wg.Wait()
}

// The defaults of Config.RuntimeStatusPeriod and Config.RuntimeStatusThreshold, the kubelet's.
const (
	DefaultRuntimeStatusPeriod    = health.DefaultPeriod
	DefaultRuntimeStatusThreshold = health.DefaultThreshold
)

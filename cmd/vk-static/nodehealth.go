package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/vk-static/vk-static/lifecycle"
)

// nodeHealthOptions say how the Node's conditions follow the machine: the runtime's health for
// Ready. The kubelet asks its runtime every 5 s and calls it down after 30 s without a ready
// answer, and lets neither be configured; these flags are vk-static's own, for tests and for
// nodes that must turn NotReady sooner.
type nodeHealthOptions struct {
	RuntimeStatusPeriod    time.Duration
	RuntimeStatusThreshold time.Duration
}

func defaultNodeHealthOptions() nodeHealthOptions {
	return nodeHealthOptions{
		RuntimeStatusPeriod:    lifecycle.DefaultRuntimeStatusPeriod,
		RuntimeStatusThreshold: lifecycle.DefaultRuntimeStatusThreshold,
	}
}

func (o *options) addNodeHealthFlags(fs *pflag.FlagSet) {
	h := &o.NodeHealth
	fs.DurationVar(&h.RuntimeStatusPeriod, "runtime-status-period", h.RuntimeStatusPeriod,
		"How often the container runtime's health is asked (CRI Status; --provider process: its state directory and supervisors). The kubelet's is 5s, not configurable.")
	fs.DurationVar(&h.RuntimeStatusThreshold, "runtime-status-threshold", h.RuntimeStatusThreshold,
		"How long the container runtime may go without reporting itself ready before the Node turns Ready=False with \"container runtime is down\". The kubelet's is 30s, not configurable. The Lease is renewed regardless while the agent runs.")
}

func (o *options) validateNodeHealth(bad func(flag, format string, args ...any)) {
	h := o.NodeHealth
	if h.RuntimeStatusPeriod <= 0 {
		bad("runtime-status-period", "must be positive, got %s", h.RuntimeStatusPeriod)
	}
	if h.RuntimeStatusThreshold < h.RuntimeStatusPeriod {
		bad("runtime-status-threshold", "%s is shorter than --runtime-status-period %s: the runtime would be down between two answers", h.RuntimeStatusThreshold, h.RuntimeStatusPeriod)
	}
}

// applyNodeHealth sets what the lifecycle needs of o.NodeHealth.
func (o *options) applyNodeHealth(cfg *lifecycle.Config) {
	cfg.RuntimeStatusPeriod = o.NodeHealth.RuntimeStatusPeriod
	cfg.RuntimeStatusThreshold = o.NodeHealth.RuntimeStatusThreshold
}

// runtimeHealth is the provider's runtime health for /healthz and /readyz; nil for a provider
// that reports none (mock).
func (b builtProvider) runtimeHealth() func() error {
	if h, ok := b.provider.(interface{ RuntimeHealth() error }); ok {
		return h.RuntimeHealth
	}
	return nil
}

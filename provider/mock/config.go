package mock

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"
)

// Defaults for the zero fields of Config.
const (
	DefaultCPU    = "20"
	DefaultMemory = "100Gi"
	DefaultPods   = "110"
)

// Config describes the simulated node.
type Config struct {
	// NodeName is reported as the pods' spec.nodeName when they arrive without one. Required.
	NodeName string
	// InternalIP is the node's address: every pod's hostIP, and its podIP unless PodIP is set.
	// Required.
	InternalIP string
	// PodIP, when set, is every pod's podIP (the simulator gives all pods one address).
	PodIP string
	// Clock times delays and timestamps; default the real clock.
	Clock clock.WithTicker
	// CPU, Memory and Pods are the node's capacity (and allocatable); defaults DefaultCPU,
	// DefaultMemory, DefaultPods. Pods also sizes the provider's maps.
	CPU, Memory, Pods resource.Quantity
	// RecordCalls makes the provider count the CreatePod, UpdatePod and DeletePod calls of
	// every pod UID, for Provider.Calls. The counters outlive the pods (a test can check that a
	// UID was created once over a whole scenario), so they grow with every UID the provider
	// sees: for tests only, never for a long run (the agent, benchmarks). Off, nothing is
	// recorded and Calls panics.
	RecordCalls bool
}

// withDefaults validates c and fills its zero fields.
func (c Config) withDefaults() (Config, error) {
	if c.NodeName == "" {
		return c, fmt.Errorf("mock: Config.NodeName is required")
	}
	if _, err := netip.ParseAddr(c.InternalIP); err != nil {
		return c, fmt.Errorf("mock: Config.InternalIP %q: %w", c.InternalIP, err)
	}
	if c.PodIP == "" {
		c.PodIP = c.InternalIP
	} else if _, err := netip.ParseAddr(c.PodIP); err != nil {
		return c, fmt.Errorf("mock: Config.PodIP %q: %w", c.PodIP, err)
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.CPU.IsZero() {
		c.CPU = resource.MustParse(DefaultCPU)
	}
	if c.Memory.IsZero() {
		c.Memory = resource.MustParse(DefaultMemory)
	}
	if c.Pods.IsZero() {
		c.Pods = resource.MustParse(DefaultPods)
	}
	return c, nil
}

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

package app

import (
	"maps"
	"strings"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/vk-static/vk-static/agent"
	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/lifecycle"
)

// nodeHealthOptions say how the Node's conditions follow the machine: the runtime's health for
// Ready. The kubelet asks its runtime every 5 s and calls it down after 30 s without a ready
// answer, and lets neither be configured; these flags are vk-static's own, for tests and for
// nodes that must turn NotReady sooner.
//
// The pressure conditions follow the kubelet's eviction settings, with its flags, fields and
// defaults.
type nodeHealthOptions struct {
	RuntimeStatusPeriod    time.Duration
	RuntimeStatusThreshold time.Duration

	EvictionHard                     map[string]string
	EvictionSoft                     map[string]string
	EvictionSoftGracePeriod          map[string]string
	EvictionMinimumReclaim           map[string]string
	EvictionPressureTransitionPeriod time.Duration
	EvictionMaxPodGracePeriod        int32
}

func defaultNodeHealthOptions() nodeHealthOptions {
	return nodeHealthOptions{
		RuntimeStatusPeriod:              lifecycle.DefaultRuntimeStatusPeriod,
		RuntimeStatusThreshold:           lifecycle.DefaultRuntimeStatusThreshold,
		EvictionHard:                     maps.Clone(eviction.DefaultEvictionHard),
		EvictionPressureTransitionPeriod: eviction.DefaultPressureTransitionPeriod,
	}
}

func (o *options) addNodeHealthFlags(fs *pflag.FlagSet) {
	h := &o.NodeHealth
	fs.DurationVar(&h.RuntimeStatusPeriod, "runtime-status-period", h.RuntimeStatusPeriod,
		"How often the container runtime's health is asked (CRI Status; --provider process: its state directory and supervisors). The kubelet's is 5s, not configurable.")
	fs.DurationVar(&h.RuntimeStatusThreshold, "runtime-status-threshold", h.RuntimeStatusThreshold,
		"How long the container runtime may go without reporting itself ready before the Node turns Ready=False with \"container runtime is down\". The kubelet's is 30s, not configurable. The Lease is renewed regardless while the agent runs.")
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&h.EvictionHard), "eviction-hard",
		"Eviction thresholds (e.g. memory.available<1Gi,nodefs.available<10%) that, met, set the Node's MemoryPressure, DiskPressure or PIDPressure condition. Signals: memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, pid.available; 0% turns a signal off. Setting it replaces the defaults.")
	fs.Var(cliflag.NewLangleSeparatedMapStringString(&h.EvictionSoft), "eviction-soft",
		"Eviction thresholds (e.g. memory.available<1.5Gi) that set their pressure condition at once and count for eviction once met for their --eviction-soft-grace-period.")
	fs.Var(cliflag.NewMapStringString(&h.EvictionSoftGracePeriod), "eviction-soft-grace-period",
		"Grace periods (e.g. memory.available=1m30s) of the --eviction-soft thresholds, one for each.")
	fs.Var(cliflag.NewMapStringString(&h.EvictionMinimumReclaim), "eviction-minimum-reclaim",
		"Minimum reclaims (e.g. imagefs.available=2Gi): a threshold met stays met until this much more than it is available.")
	fs.DurationVar(&h.EvictionPressureTransitionPeriod, "eviction-pressure-transition-period", h.EvictionPressureTransitionPeriod,
		"How long a pressure condition stays True after its last threshold stopped being met.")
	fs.Int32Var(&h.EvictionMaxPodGracePeriod, "eviction-max-pod-grace-period", h.EvictionMaxPodGracePeriod,
		"The longest grace period, in seconds, a pod evicted for a soft threshold gets (its terminationGracePeriodSeconds if shorter); a hard threshold evicts with 1s, as the kubelet.")
}

// evictionThresholds parses the eviction flags as the kubelet does.
func (o *options) evictionThresholds() ([]eviction.Threshold, error) {
	h := o.NodeHealth
	return eviction.ParseThresholdConfig(h.EvictionHard, h.EvictionSoft, h.EvictionSoftGracePeriod, h.EvictionMinimumReclaim)
}

func (o *options) validateNodeHealth(bad func(flag, format string, args ...any)) {
	h := o.NodeHealth
	if h.RuntimeStatusPeriod <= 0 {
		bad("runtime-status-period", "must be positive, got %s", h.RuntimeStatusPeriod)
	}
	if h.RuntimeStatusThreshold < h.RuntimeStatusPeriod {
		bad("runtime-status-threshold", "%s is shorter than --runtime-status-period %s: the runtime would be down between two answers", h.RuntimeStatusThreshold, h.RuntimeStatusPeriod)
	}
	if _, err := o.evictionThresholds(); err != nil {
		// The kubelet's messages name the signal; the flag is the one it came from.
		flag := "eviction-hard"
		switch {
		case strings.Contains(err.Error(), "grace period"):
			flag = "eviction-soft-grace-period"
		case strings.Contains(err.Error(), "minimum reclaim"):
			flag = "eviction-minimum-reclaim"
		case len(h.EvictionSoft) > 0 && o.parsesAlone(h.EvictionHard):
			flag = "eviction-soft"
		}
		bad(flag, "%v", err)
	}
	if h.EvictionMaxPodGracePeriod < 0 {
		bad("eviction-max-pod-grace-period", "must not be negative, got %d", h.EvictionMaxPodGracePeriod)
	}
	if h.EvictionPressureTransitionPeriod < 0 {
		bad("eviction-pressure-transition-period", "must not be negative, got %s", h.EvictionPressureTransitionPeriod)
	}
}

// parsesAlone reports whether hard thresholds parse by themselves (so an error is another
// flag's).
func (o *options) parsesAlone(hard map[string]string) bool {
	_, err := eviction.ParseThresholdConfig(hard, nil, nil, nil)
	return err == nil
}

// applyNodeHealth sets what the lifecycle needs of o.NodeHealth.
func (o *options) applyNodeHealth(cfg *lifecycle.Config) {
	cfg.RuntimeStatusPeriod = o.NodeHealth.RuntimeStatusPeriod
	cfg.RuntimeStatusThreshold = o.NodeHealth.RuntimeStatusThreshold
	thresholds, _ := o.evictionThresholds() // validated
	cfg.Eviction = &eviction.Config{
		Thresholds:               thresholds,
		PressureTransitionPeriod: o.NodeHealth.EvictionPressureTransitionPeriod,
		MaxPodGracePeriod:        time.Duration(o.NodeHealth.EvictionMaxPodGracePeriod) * time.Second,
	}
}

// applyEvictionConfig applies a KubeletConfiguration's eviction fields.
func applyEvictionConfig(cfg *kubeletv1beta1.KubeletConfiguration, o *options, set func(flag string, apply func())) {
	h := &o.NodeHealth
	if cfg.EvictionHard != nil {
		set("eviction-hard", func() { h.EvictionHard = cfg.EvictionHard })
	}
	if cfg.EvictionSoft != nil {
		set("eviction-soft", func() { h.EvictionSoft = cfg.EvictionSoft })
	}
	if cfg.EvictionSoftGracePeriod != nil {
		set("eviction-soft-grace-period", func() { h.EvictionSoftGracePeriod = cfg.EvictionSoftGracePeriod })
	}
	if cfg.EvictionMinimumReclaim != nil {
		set("eviction-minimum-reclaim", func() { h.EvictionMinimumReclaim = cfg.EvictionMinimumReclaim })
	}
	if cfg.EvictionMaxPodGracePeriod != 0 {
		set("eviction-max-pod-grace-period", func() { h.EvictionMaxPodGracePeriod = cfg.EvictionMaxPodGracePeriod })
	}
	if cfg.EvictionPressureTransitionPeriod.Duration != 0 {
		set("eviction-pressure-transition-period", func() { h.EvictionPressureTransitionPeriod = cfg.EvictionPressureTransitionPeriod.Duration })
	}
}

// runtimeHealth is the provider's runtime health for /healthz and /readyz; nil for a provider
// that reports none (mock).
func runtimeHealth(p agent.Provider) func() error {
	if h, ok := p.(interface{ RuntimeHealth() error }); ok {
		return h.RuntimeHealth
	}
	return nil
}

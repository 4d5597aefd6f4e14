package app

import (
	"fmt"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/nodeshutdown"
)

// Graceful node shutdown: the kubelet's shutdownGracePeriod, shutdownGracePeriodCriticalPods
// and shutdownGracePeriodByPodPriority. The kubelet has no flags for them, only these
// KubeletConfiguration fields, and neither has vk-static.

// applyShutdownConfig applies a KubeletConfiguration's graceful shutdown fields to o and
// checks them as the kubelet does, naming the fields.
func applyShutdownConfig(cfg *kubeletv1beta1.KubeletConfiguration, o *options) error {
	o.Shutdown = nodeshutdown.Config{
		GracePeriod:             cfg.ShutdownGracePeriod.Duration,
		GracePeriodCriticalPods: cfg.ShutdownGracePeriodCriticalPods.Duration,
	}
	for _, b := range cfg.ShutdownGracePeriodByPodPriority {
		o.Shutdown.ByPodPriority = append(o.Shutdown.ByPodPriority,
			nodeshutdown.PriorityGracePeriod{Priority: b.Priority, GracePeriodSeconds: b.ShutdownGracePeriodSeconds})
	}
	if err := o.Shutdown.Validate(); err != nil {
		return fmt.Errorf("invalid graceful node shutdown: %w", err)
	}
	return nil
}

// shutdownByPodPriority is o's shutdownGracePeriodByPodPriority as a KubeletConfiguration
// holds it, for /configz.
func (o *options) shutdownByPodPriority() []kubeletv1beta1.ShutdownGracePeriodByPodPriority {
	var out []kubeletv1beta1.ShutdownGracePeriodByPodPriority
	for _, b := range o.Shutdown.ByPodPriority {
		out = append(out, kubeletv1beta1.ShutdownGracePeriodByPodPriority{Priority: b.Priority, ShutdownGracePeriodSeconds: b.GracePeriodSeconds})
	}
	return out
}

// applyShutdown sets the lifecycle's node shutdown manager when the configuration asks for a
// grace period; none leaves the host's shutdown alone, as the kubelet's.
func (o *options) applyShutdown(cfg *lifecycle.Config) {
	if o.Shutdown.Enabled() {
		sc := o.Shutdown
		cfg.Shutdown = &sc
	}
}

package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// The status a pod stopped for the node's shutdown is left with, the kubelet's: phase Failed,
// this reason and message, and a DisruptionTarget condition (reason TerminationByKubelet) with
// the same message.
const (
	Reason  = "Terminated"
	Message = "Pod was terminated in response to imminent node shutdown."
)

// ErrShuttingDown is ShutdownStatus while the node shuts down, the kubelet's words: the Node's
// Ready condition quotes it.
var ErrShuttingDown = errors.New("node is shutting down")

// PriorityGracePeriod is one band of the kubelet's shutdownGracePeriodByPodPriority: the pods
// of at least Priority (and below the next band's) get GracePeriodSeconds.
type PriorityGracePeriod struct {
	Priority           int32
	GracePeriodSeconds int64
}

// Config configures a Manager. It is enabled (Enabled) when it asks for any grace period.
type Config struct {
	// GracePeriod and GracePeriodCriticalPods are the kubelet's shutdownGracePeriod and
	// shutdownGracePeriodCriticalPods: the whole delay, and the part of it kept for critical
	// pods. Whole seconds count.
	GracePeriod             time.Duration
	GracePeriodCriticalPods time.Duration
	// ByPodPriority is the kubelet's shutdownGracePeriodByPodPriority, in place of the two
	// above.
	ByPodPriority []PriorityGracePeriod

	// BusAddress is the D-Bus to find logind on; "" is the system bus.
	BusAddress string

	// ActivePods are the pods to stop: those neither terminating nor terminated.
	ActivePods func() []*corev1.Pod
	// StopPod stops pod's containers (preStop hooks included) within grace and leaves it
	// Failed with reason and message; it returns once they have stopped. The lifecycle's
	// stop for the node's sake, as eviction's.
	StopPod func(ctx context.Context, pod *corev1.Pod, grace time.Duration, reason, message string) error
	// NodeStatusChanged, when set, is called when ShutdownStatus changes, so the Node's Ready
	// condition follows at once (the kubelet's syncNodeStatus).
	NodeStatusChanged func(ctx context.Context)
	// Recorder, with NodeRef, receives the node's NodeShutdown events; nil records none.
	Recorder record.EventRecorder
	NodeRef  *corev1.ObjectReference
	// Clock is the time source; nil is the real clock.
	Clock clock.WithTicker
}

// Enabled reports whether c asks for a graceful shutdown at all, as the kubelet's manager is
// a stub without one.
func (c Config) Enabled() bool { return len(Groups(c)) > 0 }

// Validate checks the grace periods as the kubelet's configuration validation does, naming
// the KubeletConfiguration fields.
func (c Config) Validate() error {
	var errs []error
	if c.GracePeriodCriticalPods > c.GracePeriod {
		errs = append(errs, fmt.Errorf("shutdownGracePeriodCriticalPods %s must be <= shutdownGracePeriod %s", c.GracePeriodCriticalPods, c.GracePeriod))
	}
	if c.GracePeriod < 0 || (c.GracePeriod > 0 && c.GracePeriod < time.Second) {
		errs = append(errs, fmt.Errorf("shutdownGracePeriod %s must be either zero or otherwise >= 1 sec", c.GracePeriod))
	}
	if c.GracePeriodCriticalPods < 0 || (c.GracePeriodCriticalPods > 0 && c.GracePeriodCriticalPods < time.Second) {
		errs = append(errs, fmt.Errorf("shutdownGracePeriodCriticalPods %s must be either zero or otherwise >= 1 sec", c.GracePeriodCriticalPods))
	}
	if len(c.ByPodPriority) > 0 && (c.GracePeriod > 0 || c.GracePeriodCriticalPods > 0) {
		errs = append(errs, errors.New("cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod at the same time"))
	}
	seen := map[int32]bool{}
	for i, b := range c.ByPodPriority {
		// The kubelet takes these as they come; a negative delay or two bands of one priority
		// are mistakes a node would only find out about at its shutdown.
		if b.GracePeriodSeconds < 0 {
			errs = append(errs, fmt.Errorf("shutdownGracePeriodByPodPriority[%d].shutdownGracePeriodSeconds %d must not be negative", i, b.GracePeriodSeconds))
		}
		if seen[b.Priority] {
			errs = append(errs, fmt.Errorf("shutdownGracePeriodByPodPriority[%d].priority %d appears twice", i, b.Priority))
		}
		seen[b.Priority] = true
	}
	return errors.Join(errs...)
}

package lifecycle

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/nodeshutdown"
	"github.com/vk-static/vk-static/podutil"
)

// Graceful node shutdown (package nodeshutdown decides when and with what grace; this is how a
// pod is stopped for it): a pod is stopped as for an eviction (stopForNode), with reason
// Terminated and the kubelet's message, so its status is the kubelet's — Failed, that reason
// and message, a DisruptionTarget condition with reason TerminationByKubelet — and its preStop
// hooks run within the grace the shutdown gave. While the node shuts down, the Node's Ready
// condition says so ("node is shutting down", joined to the runtime's errors; a Runtime that
// reports no health leaves Ready to the node controller, which does not) and new pods are
// refused with the kubelet's reason.

// The kubelet's refusal of a pod while the node shuts down.
const (
	ReasonNodeShutdown        = "NodeShutdown"
	messageNodeShutdownRefuse = "Pod was rejected as the node is shutting down."
)

// newShutdownManager builds the node shutdown manager of cfg.Shutdown, stopping p's active
// pods; nil without one, or when it asks for no grace period.
func newShutdownManager(cfg Config, p *Provider) *nodeshutdown.Manager {
	if cfg.Shutdown == nil || !cfg.Shutdown.Enabled() {
		return nil
	}
	sc := *cfg.Shutdown
	if sc.Clock == nil {
		sc.Clock = cfg.Clock
	}
	sc.ActivePods, sc.StopPod = p.activePods, p.stopForNode
	sc.NodeStatusChanged = func(ctx context.Context) {
		if p.health != nil {
			p.health.Report(ctx) // at once: the pods' stops wait for it
		}
	}
	if cfg.NodeName != "" {
		// The kubelet's node reference for events: the name as UID too.
		sc.Recorder = cfg.Recorder
		sc.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: cfg.NodeName, UID: types.UID(cfg.NodeName)}
	}
	return nodeshutdown.NewManager(sc)
}

// shutdownStatus is the node shutdown manager's ShutdownStatus; nil without one.
func (p *Provider) shutdownStatus() error {
	if p.shutdown == nil {
		return nil
	}
	return p.shutdown.ShutdownStatus()
}

// shutdownAdmit refuses a pod while the node shuts down, as the kubelet's shutdown manager
// does.
func (p *Provider) shutdownAdmit(*corev1.Pod) error {
	if p.shutdownStatus() != nil {
		return &Refusal{Reason: ReasonNodeShutdown, Message: messageNodeShutdownRefuse}
	}
	return nil
}

// rerunAfterShutdown lets a static pod stopped for the node's shutdown run again when the agent
// starts again, as the kubelet runs its static pods again after a reboot: its manifest is
// still there. An API pod stays Failed, as its status says: its controller replaces it.
func rerunAfterShutdown(st *podState) {
	if st.evictedReason == nodeshutdown.Reason && podutil.IsStaticPod(st.pod) {
		st.evicted, st.evictedReason, st.evictGrace = "", "", 0
	}
}

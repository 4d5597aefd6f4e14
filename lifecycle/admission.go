package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/lifecycle/admission"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
)

// The kubelet's admission reasons (pkg/kubelet/lifecycle, pkg/kubelet/sysctl) and the prefix
// of the status message of a pod it rejects (Kubelet.rejectPod).
const (
	ReasonPodOSNotSupported                  = "PodOSNotSupported"
	ReasonPodOSSelectorNodeLabelDoesNotMatch = "PodOSSelectorNodeLabelDoesNotMatch"
	ReasonSysctlForbidden                    = "SysctlForbidden"
	rejectedMessagePrefix                    = "Pod was rejected: "
)

// Refusal is why a pod is not admitted, with the reason the pod's status and its event give
// (the kubelet's, where the kubelet refuses the same). A Runtime's Admit may return one; any
// other error is refused with reason NotAdmitted.
type Refusal struct {
	Reason  string
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// refusalReason is err's Refusal reason, NotAdmitted when it has none.
func refusalReason(err error) string {
	if r, ok := errors.AsType[*Refusal](err); ok && r.Reason != "" {
		return r.Reason
	}
	return reasonNotAdmitted
}

// kubeletAdmit refuses what the kubelet's own admission handlers refuse on a Linux node, with their
// reasons and messages, before the node's predicates (nodeAdmitLocked): a pod the node's pressure
// leaves no room for, sysctls outside the safe set and Config.AllowedUnsafeSysctls, and a pod for
// another operating system (spec.os.name, or the kubernetes.io/os label the kubelet checks against
// its node's), and any pod while the node shuts down ([Provider.shutdownAdmit]). Nothing is started
// for such a pod; its status is the kubelet's rejection: Failed, the reason, "Pod was rejected:
// <message>".
func (p *Provider) kubeletAdmit(pod *corev1.Pod) error {
	// The kubelet's order: its eviction manager's handler, the sysctls', then its predicates'.
	if err := p.pressureAdmit(pod); err != nil {
		return err
	}
	if err := p.sysctls.admit(pod); err != nil {
		return err
	}
	if pod.Spec.OS != nil && string(pod.Spec.OS.Name) != goruntime.GOOS {
		return &Refusal{Reason: ReasonPodOSNotSupported, Message: "Failed to admit pod as the OS field doesn't match node OS"}
	}
	if os, ok := pod.Labels[corev1.LabelOSStable]; ok && os != goruntime.GOOS {
		return &Refusal{Reason: ReasonPodOSSelectorNodeLabelDoesNotMatch,
			Message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label"}
	}
	return p.shutdownAdmit(pod) // the kubelet's shutdown manager, its last handler
}

// kernelVersion is the running kernel's version, as the kubelet reads it for its safe
// sysctls; nil (only the sysctls safe on any kernel) when it cannot be read.
func kernelVersion(ctx context.Context) *version.Version {
	data, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err == nil {
		var v *version.Version
		if v, err = version.ParseGeneric(strings.TrimSpace(string(data))); err == nil {
			return v
		}
	}
	klog.FromContext(ctx).Error(err, "Reading the kernel's version: only the sysctls safe on any kernel are allowed")
	return nil
}

// reasonUnexpectedAdmissionError is the kubelet's reason for a critical pod it could not make
// room for.
const reasonUnexpectedAdmissionError = "UnexpectedAdmissionError"

// nodeAdmitLocked is the kubelet's predicate admission (GeneralPredicates, package admission)
// of pod against Config.Node and the pods admitted before it. A pod that fits gets nil. A
// critical pod that fits once others stop gets those others, to preempt before it runs. Any
// other pod that does not fit gets the kubelet's refusal for the first predicate it fails:
// OutOfcpu, OutOfmemory, OutOfpods, NodeAffinity, NodePorts, TaintToleration.
func (p *Provider) nodeAdmitLocked(ctx context.Context, pod *corev1.Pod) ([]*corev1.Pod, error) {
	if p.cfg.Node == nil {
		return nil, nil
	}
	node := p.cfg.Node()
	if node == nil {
		return nil, &Refusal{Reason: "InvalidNodeInfo", Message: "Kubelet cannot get node info."}
	}
	admitted := p.admittedLocked(pod.UID)
	failures := admission.Check(klog.FromContext(ctx), pod, node, admitted)
	if len(failures) == 0 {
		return nil, nil
	}
	refusal := &Refusal{Reason: failures[0].Reason(), Message: failures[0].Message()}
	if !eviction.IsCriticalPod(pod) {
		return nil, refusal
	}
	victims, err := admission.Victims(pod, admitted, failures)
	switch {
	case errors.Is(err, admission.ErrNotOnlyResources):
		// Resources are no reason to refuse a critical pod: the first other failure is.
		for _, f := range failures {
			if f.Resource == "" {
				return nil, &Refusal{Reason: f.Reason(), Message: f.Message()}
			}
		}
	case err != nil:
		return nil, &Refusal{Reason: reasonUnexpectedAdmissionError,
			Message: fmt.Sprintf("Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: %v", err)}
	}
	return victims, nil
}

// admittedLocked are the pods the node has admitted that still hold what they asked for, the
// kubelet's active pods: neither refused nor terminated (a pod being stopped still runs), all
// but the pod uid.
func (p *Provider) admittedLocked(uid types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for id, st := range p.pods {
		if id == uid || st.refused != "" {
			continue
		}
		switch st.workState() {
		case podTerminated:
			continue
		case podSyncing:
			if podstatus.IsTerminal(st.status) {
				continue // its containers have all ended for good
			}
		}
		out = append(out, st.allocatedPod()) // what the node gave it, a resize pending or not
	}
	return out
}

// preempt stops victims so that critical pod fits, as the kubelet's critical pod admission:
// each is stopped with its own grace period and left Failed, reason Preempting. It returns
// once they have stopped (or the wait for one failed, which is logged: the pod is admitted
// all the same, as the kubelet admits it).
func (p *Provider) preempt(ctx context.Context, pod *corev1.Pod, victims []*corev1.Pod) {
	log := klog.FromContext(ctx)
	for _, v := range victims {
		log.Info("Preempting a pod to admit a critical pod", "pod", klog.KObj(v), "podUID", v.UID, "criticalPod", klog.KObj(pod))
		if err := p.stopForNode(ctx, v, podutil.GracePeriod(v), admission.ReasonPreempting, admission.MessagePreempted); err != nil {
			log.Error(err, "Preempting a pod", "pod", klog.KObj(v))
		}
	}
}

// ReasonEvicted is the kubelet's reason for a pod refused, or evicted, for the node's pressure.
const ReasonEvicted = "Evicted"

// pressureAdmit is the kubelet's eviction admission (its eviction manager's Admit): under
// pressure (Config.Eviction's conditions) a critical pod (static, mirror, or of system-critical
// priority) is admitted; under memory pressure alone, a pod that is not BestEffort, or a
// BestEffort one that tolerates the memory-pressure taint; under any other pressure, none.
// The refusal is the kubelet's: reason Evicted, "The node had condition: [DiskPressure]. ".
func (p *Provider) pressureAdmit(pod *corev1.Pod) error {
	if p.eviction == nil {
		return nil
	}
	conditions := p.eviction.Conditions()
	if len(conditions) == 0 || eviction.IsCriticalPod(pod) {
		return nil
	}
	if len(conditions) == 1 && conditions[0] == corev1.NodeMemoryPressure {
		if podutil.QOSClass(pod) != corev1.PodQOSBestEffort || toleratesMemoryPressure(pod) {
			return nil
		}
	}
	return &Refusal{Reason: ReasonEvicted, Message: fmt.Sprintf("The node had condition: %v. ", conditions)}
}

// memoryPressureTaint is the taint a node under memory pressure has, which a BestEffort pod
// must tolerate to be admitted (the kubelet's eviction admission).
var memoryPressureTaint = corev1.Taint{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}

// toleratesMemoryPressure is whether a toleration of the pod tolerates memoryPressureTaint, as
// the scheduler matches them (comparison operators, an alpha feature, off).
func toleratesMemoryPressure(pod *corev1.Pod) bool {
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.Background(), &memoryPressureTaint, false) {
			return true
		}
	}
	return false
}

// admitLocked refuses a pod the kubelet refuses (kubeletAdmit, nodeAdmitLocked), or that the
// runtime may not run as it is written, or that asks for what the lifecycle does not do; the
// message names the field. A critical pod that fits once others stop gets those others, to
// preempt before it starts.
func (p *Provider) admitLocked(ctx context.Context, pod *corev1.Pod) ([]*corev1.Pod, error) {
	if err := p.kubeletAdmit(pod); err != nil {
		return nil, err
	}
	victims, err := p.nodeAdmitLocked(ctx, pod)
	if err != nil {
		return nil, err
	}
	// Ephemeral containers are not refused here: they arrive on a running pod, and each is
	// admitted on its own before it starts ([Provider.admitEphemeral]).
	return victims, p.rt.Admit(pod)
}

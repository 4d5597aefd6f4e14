package lifecycle

import (
	"context"
	"errors"
	"os"
	goruntime "runtime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/klog/v2"
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

// kubeletAdmit refuses what the kubelet's own admission handlers refuse on a Linux node, with
// their reasons and messages, before the node's predicates (nodeAdmitLocked): a pod the node's
// pressure leaves no room for, sysctls outside the safe set and Config.AllowedUnsafeSysctls,
// and a pod for another operating system (spec.os.name, or the kubernetes.io/os label the
// kubelet checks against its node's), and any pod while the node shuts down (shutdown.go).
// Nothing is started for such a pod; its status is the kubelet's rejection: Failed, the
// reason, "Pod was rejected: <message>".
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

package cri

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

var _ lifecycle.EphemeralRuntime = (*Runtime)(nil)

// AdmitEphemeral runs an ephemeral container as any other in the pod's existing sandbox; it
// refuses, as Admit does for the pod's other containers, a privileged one without
// Config.AllowPrivileged (--allow-privileged), which Admit never saw: ephemeral containers
// arrive after the pod was admitted.
func (r *Runtime) AdmitEphemeral(_ *corev1.Pod, c *corev1.EphemeralContainer, field string) error {
	if sc := c.SecurityContext; !r.cfg.AllowPrivileged && sc != nil && sc.Privileged != nil && *sc.Privileged {
		return fmt.Errorf("%s.securityContext.privileged: privileged containers are not allowed on this node (--allow-privileged)", field)
	}
	return nil
}

// targetNamespace makes a container with a target (an ephemeral container's
// targetContainerName) join that container's PID namespace, as the kubelet does: only when
// it would otherwise have one of its own — a pod sharing its process namespace, or the
// node's, already shares it with the target.
func targetNamespace(ns *runtimeapi.NamespaceOption, targetID string) {
	if targetID == "" || ns == nil || ns.Pid != runtimeapi.NamespaceMode_CONTAINER {
		return
	}
	ns.Pid = runtimeapi.NamespaceMode_TARGET
	ns.TargetId = targetID
}

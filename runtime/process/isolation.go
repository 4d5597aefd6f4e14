package process

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// restricted reports whether pod gets the sandbox (records.Sandbox.Restricted): a pod that is
// not trusted (an API pod, or a static pod under Config.RestrictStaticPods), when the agent is
// root. Without root the agent runs every container as itself, which the sandbox would not make
// less; such containers still get no_new_privs. A config without its pod — a caller of the
// Runtime other than the lifecycle, which always gives it — runs as it says.
func (r *Runtime) restricted(pod *corev1.Pod) bool {
	return pod != nil && r.root && !r.trusted(pod)
}

// containerSandbox decides the isolation of a container of pod, whose sandbox record is sb: for
// a restricted pod everything records.Sandbox has, its namespaces as the pod's hostPID,
// hostIPC, hostNetwork and shareProcessNamespace say; for any pod, no_new_privs when the
// container sets allowPrivilegeEscalation: false, as the kubelet's runtimes do.
func (r *Runtime) containerSandbox(sb *sandboxRecord, pod *corev1.Pod, c *corev1.Container) records.Sandbox {
	var out records.Sandbox
	if c != nil && c.SecurityContext != nil && c.SecurityContext.AllowPrivilegeEscalation != nil && !*c.SecurityContext.AllowPrivilegeEscalation {
		out.NoNewPrivs = true
	}
	if pod == nil || r.trusted(pod) {
		return out
	}
	out.NoNewPrivs = true
	if !r.restricted(pod) {
		return out
	}
	spec := &pod.Spec
	out.Restricted = true
	out.Masked = r.masked
	out.Holder = sb.Holder
	out.HostPID = spec.HostPID
	out.JoinPID = !spec.HostPID && spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace
	out.JoinIPC = !spec.HostIPC
	out.JoinUTS = !spec.HostNetwork // a host-network pod has the node's hostname, as the kubelet's
	out.JoinNet = sb.Network
	return out
}

// admitNamespaces refuses a restricted pod that asks for the host's PID or IPC namespace,
// unless Config.AllowHostNamespaces, or for its network, unless Config.AllowHostNetwork. One
// that needs the pod network on a node without one is admitted, and waits (ownNetwork).
func (r *Runtime) admitNamespaces(pod *corev1.Pod) error {
	if !r.restricted(pod) {
		return nil // the host's are what it gets anyway: trusted, or without root no sandbox
	}
	for _, f := range []struct {
		field, flag  string
		set, allowed bool
	}{
		{"spec.hostPID", "--process-allow-host-namespaces", pod.Spec.HostPID, r.cfg.AllowHostNamespaces},
		{"spec.hostIPC", "--process-allow-host-namespaces", pod.Spec.HostIPC, r.cfg.AllowHostNamespaces},
		{"spec.hostNetwork", "--process-allow-host-network", pod.Spec.HostNetwork, r.cfg.AllowHostNetwork},
	} {
		if f.set && !f.allowed {
			return fmt.Errorf("%s: true is not allowed for %s: start the agent with %s", f.field, whose(pod), f.flag)
		}
	}
	return nil
}

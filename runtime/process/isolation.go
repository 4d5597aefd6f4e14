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
	return out
}

// admitNamespaces refuses an untrusted pod that asks for the host's PID or IPC namespace,
// unless Config.AllowHostNamespaces. hostNetwork is what every process pod has.
func (r *Runtime) admitNamespaces(pod *corev1.Pod) error {
	if r.trusted(pod) || r.cfg.AllowHostNamespaces {
		return nil
	}
	for _, f := range []struct {
		field string
		set   bool
	}{{"spec.hostPID", pod.Spec.HostPID}, {"spec.hostIPC", pod.Spec.HostIPC}} {
		if f.set {
			return fmt.Errorf("%s: true is not allowed for %s: start the agent with --process-allow-host-namespaces", f.field, whose(pod))
		}
	}
	return nil
}

package cri

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

// RunSandbox runs a CRI pod sandbox for cfg's pod.
func (r *Runtime) RunSandbox(ctx context.Context, cfg *lifecycle.SandboxConfig) (string, error) {
	sc := podSandboxConfig(cfg, r.cfg.SeccompProfileRoot)
	id, err := r.rs.RunPodSandbox(ctx, sc, cfg.RuntimeHandler)
	if err != nil {
		return "", fmt.Errorf("run pod sandbox: %w", err)
	}
	r.mu.Lock()
	r.sandboxConfigs[id] = sc
	r.mu.Unlock()
	return id, nil
}

// StopSandbox stops the sandbox (and its network).
func (r *Runtime) StopSandbox(ctx context.Context, sandboxID string) error {
	return notFound(r.rs.StopPodSandbox(ctx, sandboxID), "sandbox", sandboxID)
}

// RemoveSandbox removes a stopped sandbox.
func (r *Runtime) RemoveSandbox(ctx context.Context, sandboxID string) error {
	err := notFound(r.rs.RemovePodSandbox(ctx, sandboxID), "sandbox", sandboxID)
	r.mu.Lock()
	delete(r.sandboxConfigs, sandboxID)
	r.mu.Unlock()
	return err
}

// ListSandboxes lists this runtime's sandboxes (those with LabelManaged), with their IPs.
func (r *Runtime) ListSandboxes(ctx context.Context) ([]*lifecycle.SandboxStatus, error) {
	list, err := r.rs.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{LabelManaged: "true"}})
	if err != nil {
		return nil, fmt.Errorf("list pod sandboxes: %w", err)
	}
	out := make([]*lifecycle.SandboxStatus, 0, len(list))
	for _, s := range list {
		if s.GetLabels()[lifecycle.LabelPodUID] == "" {
			continue
		}
		st := sandboxStatus(s)
		if st.State == lifecycle.SandboxReady {
			// Only the sandbox's status has its IPs; a NotFound here is a sandbox just removed.
			full, err := r.rs.PodSandboxStatus(ctx, s.GetId(), false)
			if err == nil {
				st.IPs = sandboxIPs(full.GetStatus())
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// sandboxStatus maps a listed CRI sandbox to the lifecycle's status (no IPs: listing has none).
func sandboxStatus(s *runtimeapi.PodSandbox) *lifecycle.SandboxStatus {
	md := s.GetMetadata()
	st := &lifecycle.SandboxStatus{
		ID: s.GetId(), PodUID: types.UID(md.GetUid()), Namespace: md.GetNamespace(), Name: md.GetName(),
		Attempt: md.GetAttempt(), State: lifecycle.SandboxNotReady, CreatedAt: time.Unix(0, s.GetCreatedAt()),
		Labels: ownLabels(s.GetLabels()),
	}
	if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
		st.State = lifecycle.SandboxReady
	}
	return st
}

// sandboxIPs are the pod's addresses from a sandbox status: none for a host-network sandbox.
func sandboxIPs(st *runtimeapi.PodSandboxStatus) []string {
	if st.GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE {
		return nil
	}
	var ips []string
	if ip := st.GetNetwork().GetIp(); ip != "" {
		ips = append(ips, ip)
	}
	for _, ip := range st.GetNetwork().GetAdditionalIps() {
		if ip.GetIp() != "" {
			ips = append(ips, ip.GetIp())
		}
	}
	return ips
}

// withManaged returns labels with LabelManaged added.
func withManaged(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[LabelManaged] = "true"
	return out
}

// ownLabels returns labels without LabelManaged, as the lifecycle gave them.
func ownLabels(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	delete(out, LabelManaged)
	return out
}

// podSandboxConfig is the CRI sandbox config for cfg, as the kubelet's
// generatePodSandboxConfig: metadata, hostname (empty on the host's network, which has no UTS
// namespace of its own), log directory, labels and the pod's annotations, port mappings, DNS
// off the host's network, and the pod's Linux security context.
func podSandboxConfig(cfg *lifecycle.SandboxConfig, seccompRoot string) *runtimeapi.PodSandboxConfig {
	pod := cfg.Pod
	if pod == nil {
		pod = &corev1.Pod{}
	}
	sc := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: cfg.Name, Namespace: cfg.Namespace, Uid: string(cfg.PodUID), Attempt: cfg.Attempt,
		},
		LogDirectory: cfg.LogDirectory,
		Labels:       withManaged(cfg.Labels),
		Annotations:  maps.Clone(pod.Annotations),
	}
	if !cfg.HostNetwork {
		sc.Hostname = cfg.Hostname
		sc.DnsConfig = dnsConfig(pod)
	}
	if d := cfg.DNS; d != nil {
		// The kubelet's: the runtime writes it for a pod on the host's network too.
		sc.DnsConfig = &runtimeapi.DNSConfig{Servers: d.Servers, Searches: d.Searches, Options: d.Options}
	}
	for _, p := range cfg.Ports {
		if p.HostPort == 0 && !cfg.HostNetwork {
			// The kubelet maps only ports with a host port.
			continue
		}
		sc.PortMappings = append(sc.PortMappings, &runtimeapi.PortMapping{
			Protocol: protocol(p.Protocol), ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP,
		})
	}
	sc.Linux = linuxSandboxConfig(pod, cfg.HostNetwork, seccompRoot)
	return sc
}

func protocol(p string) runtimeapi.Protocol {
	switch corev1.Protocol(p) {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// dnsConfig is the pod's DNS for a sandbox of its own network when the lifecycle makes none
// (SandboxConfig.DNS): spec.dnsConfig (nameservers, searches, options), else the runtime's
// default (the host's resolv.conf).
func dnsConfig(pod *corev1.Pod) *runtimeapi.DNSConfig {
	d := pod.Spec.DNSConfig
	if d == nil {
		return nil
	}
	out := &runtimeapi.DNSConfig{Servers: d.Nameservers, Searches: d.Searches}
	for _, o := range d.Options {
		if o.Value != nil {
			out.Options = append(out.Options, o.Name+":"+*o.Value)
		} else {
			out.Options = append(out.Options, o.Name)
		}
	}
	return out
}

// linuxSandboxConfig is the pod-level Linux part of the sandbox: namespaces, sysctls, the
// pod's user, groups and seccomp/AppArmor profiles, privileged when any container is.
func linuxSandboxConfig(pod *corev1.Pod, hostNetwork bool, seccompRoot string) *runtimeapi.LinuxPodSandboxConfig {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	out := &runtimeapi.LinuxPodSandboxConfig{
		SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions:   namespaceOptions(pod, hostNetwork),
			SupplementalGroups: supplementalGroups(psc),
			Seccomp:            seccompProfile(psc.SeccompProfile, seccompRoot),
			Apparmor:           appArmorProfile(psc.AppArmorProfile),
			SelinuxOptions:     selinuxOptions(psc.SELinuxOptions),
		},
	}
	if psc.RunAsUser != nil {
		out.SecurityContext.RunAsUser = &runtimeapi.Int64Value{Value: *psc.RunAsUser}
	}
	if psc.RunAsGroup != nil {
		out.SecurityContext.RunAsGroup = &runtimeapi.Int64Value{Value: *psc.RunAsGroup}
	}
	for _, c := range allContainers(pod) {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			out.SecurityContext.Privileged = true
		}
	}
	if len(psc.Sysctls) > 0 {
		out.Sysctls = map[string]string{}
		for _, s := range psc.Sysctls {
			out.Sysctls[s.Name] = s.Value
		}
	}
	return out
}

// namespaceOptions are the pod's namespaces: the node's network, PID and IPC namespaces as
// spec.host* say, one PID namespace for the pod with shareProcessNamespace, else one per
// container.
func namespaceOptions(pod *corev1.Pod, hostNetwork bool) *runtimeapi.NamespaceOption {
	ns := &runtimeapi.NamespaceOption{
		Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD,
	}
	if hostNetwork {
		ns.Network = runtimeapi.NamespaceMode_NODE
	}
	if pod.Spec.HostIPC {
		ns.Ipc = runtimeapi.NamespaceMode_NODE
	}
	switch {
	case pod.Spec.HostPID:
		ns.Pid = runtimeapi.NamespaceMode_NODE
	case pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace:
		ns.Pid = runtimeapi.NamespaceMode_POD
	}
	return ns
}

// supplementalGroups are the pod's supplementalGroups and its fsGroup, as the kubelet's.
func supplementalGroups(psc *corev1.PodSecurityContext) []int64 {
	groups := append([]int64(nil), psc.SupplementalGroups...)
	if psc.FSGroup != nil {
		groups = append(groups, *psc.FSGroup)
	}
	return groups
}

func selinuxOptions(o *corev1.SELinuxOptions) *runtimeapi.SELinuxOption {
	if o == nil {
		return nil
	}
	return &runtimeapi.SELinuxOption{User: o.User, Role: o.Role, Type: o.Type, Level: o.Level}
}

// allContainers are the pod's init and main containers.
func allContainers(pod *corev1.Pod) []*corev1.Container {
	var out []*corev1.Container
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}

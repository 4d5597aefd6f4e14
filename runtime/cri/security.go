package cri

import (
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// defaultMaskedPaths and defaultReadonlyPaths are the kubelet's (pkg/securitycontext, kept in
// sync with moby): what a container's /proc and /sys hide or show read-only unless its
// procMount is Unmasked or it is privileged.
var (
	defaultMaskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/interrupts", "/proc/kcore", "/proc/keys",
		"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
		"/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
	}
	defaultReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// effectiveSecurityContext is the container's securityContext with what it leaves unset taken
// from the pod's, as the kubelet's DetermineEffectiveSecurityContext.
func effectiveSecurityContext(pod *corev1.Pod, c *corev1.Container) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{}
	if c.SecurityContext != nil {
		sc = c.SecurityContext.DeepCopy()
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return sc
	}
	if sc.RunAsUser == nil {
		sc.RunAsUser = psc.RunAsUser
	}
	if sc.RunAsGroup == nil {
		sc.RunAsGroup = psc.RunAsGroup
	}
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = psc.RunAsNonRoot
	}
	if sc.SELinuxOptions == nil {
		sc.SELinuxOptions = psc.SELinuxOptions
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = psc.SeccompProfile
	}
	if sc.AppArmorProfile == nil {
		sc.AppArmorProfile = psc.AppArmorProfile
	}
	return sc
}

// containerSecurityContext maps a container's effective security context to CRI, as the
// kubelet's determineEffectiveSecurityContext: capabilities, privileged, read-only root
// filesystem, user and group, no_new_privs for allowPrivilegeEscalation false, seccomp and
// AppArmor profiles, the pod's namespaces and supplemental groups, and the default masked and
// read-only paths unless procMount is Unmasked or the container is privileged.
func containerSecurityContext(pod *corev1.Pod, c *corev1.Container, hostNetwork bool, seccompRoot string) *runtimeapi.LinuxContainerSecurityContext {
	esc := effectiveSecurityContext(pod, c)
	psc := pod.Spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	out := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions:   namespaceOptions(pod, hostNetwork),
		SupplementalGroups: supplementalGroups(psc),
		SelinuxOptions:     selinuxOptions(esc.SELinuxOptions),
		Seccomp:            seccompProfile(esc.SeccompProfile, seccompRoot),
		Apparmor:           appArmorProfile(esc.AppArmorProfile),
		MaskedPaths:        append([]string(nil), defaultMaskedPaths...),
		ReadonlyPaths:      append([]string(nil), defaultReadonlyPaths...),
	}
	if esc.Capabilities != nil {
		out.Capabilities = &runtimeapi.Capability{
			AddCapabilities: capabilityNames(esc.Capabilities.Add), DropCapabilities: capabilityNames(esc.Capabilities.Drop),
		}
	}
	if esc.Privileged != nil {
		out.Privileged = *esc.Privileged
	}
	if esc.ReadOnlyRootFilesystem != nil {
		out.ReadonlyRootfs = *esc.ReadOnlyRootFilesystem
	}
	if esc.RunAsUser != nil {
		out.RunAsUser = &runtimeapi.Int64Value{Value: *esc.RunAsUser}
	}
	if esc.RunAsGroup != nil {
		out.RunAsGroup = &runtimeapi.Int64Value{Value: *esc.RunAsGroup}
	}
	if esc.AllowPrivilegeEscalation != nil {
		out.NoNewPrivs = !*esc.AllowPrivilegeEscalation
	}
	if out.Privileged || (esc.ProcMount != nil && *esc.ProcMount == corev1.UnmaskedProcMount) {
		out.MaskedPaths, out.ReadonlyPaths = []string{}, []string{}
	}
	return out
}

func capabilityNames(caps []corev1.Capability) []string {
	var out []string
	for _, c := range caps {
		out = append(out, string(c))
	}
	return out
}

// seccompProfile maps a seccomp profile: nil (unset) is Unconfined, the kubelet's default
// without SeccompDefault; a Localhost profile is a file under root.
func seccompProfile(p *corev1.SeccompProfile, root string) *runtimeapi.SecurityProfile {
	if p == nil {
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	}
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case corev1.SeccompProfileTypeLocalhost:
		ref := ""
		if p.LocalhostProfile != nil {
			ref = filepath.Join(root, *p.LocalhostProfile)
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: ref}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

// appArmorProfile maps an AppArmor profile: nil (unset) leaves the runtime's default (its
// default profile where AppArmor is enabled, none where it is not).
func appArmorProfile(p *corev1.AppArmorProfile) *runtimeapi.SecurityProfile {
	if p == nil {
		return nil
	}
	switch p.Type {
	case corev1.AppArmorProfileTypeRuntimeDefault:
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
	case corev1.AppArmorProfileTypeLocalhost:
		ref := ""
		if p.LocalhostProfile != nil {
			ref = *p.LocalhostProfile
		}
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: ref}
	}
	return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
}

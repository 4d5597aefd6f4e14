package lifecycle

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/version"
)

// safeSysctls are the kubelet's safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go), always
// allowed: namespaced, and unable to affect other pods or the node. Those with a kernel version
// are namespaced only since it, and are safe only on such a kernel.
var safeSysctls = []struct{ name, kernel string }{
	{name: "kernel.shm_rmid_forced"},
	{name: "net.ipv4.ip_local_port_range"},
	{name: "net.ipv4.tcp_syncookies"},
	{name: "net.ipv4.ping_group_range"},
	{name: "net.ipv4.ip_unprivileged_port_start"},
	{name: "net.ipv4.ip_local_reserved_ports", kernel: "3.16"},
	{name: "net.ipv4.tcp_keepalive_time", kernel: "4.5"},
	{name: "net.ipv4.tcp_fin_timeout", kernel: "4.6"},
	{name: "net.ipv4.tcp_keepalive_intvl", kernel: "4.5"},
	{name: "net.ipv4.tcp_keepalive_probes", kernel: "4.5"},
	{name: "net.ipv4.tcp_rmem", kernel: "4.15"},
	{name: "net.ipv4.tcp_wmem", kernel: "4.15"},
}

// sysctlNamespace is the kernel namespace a sysctl belongs to (component-helpers'
// node/util/sysctl): "IPC", "Net", or "" for one not known to be namespaced.
func sysctlNamespace(name string) string {
	switch name {
	case "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.shm",
		"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg":
		return "IPC"
	}
	switch {
	case strings.HasPrefix(name, "net."):
		return "Net"
	case strings.HasPrefix(name, "fs.mqueue."):
		return "IPC"
	}
	return ""
}

// normalizeSysctl writes a sysctl with "/" separators (net/ipv4/conf/eno2.100/rp_filter) with
// "." ones (net.ipv4.conf.eno2/100.rp_filter), as the kubelet compares them.
func normalizeSysctl(s string) string {
	i := strings.IndexAny(s, "./")
	if i == -1 || s[i] == '.' {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, s)
}

// sysctlPattern is the kubelet's valid --allowed-unsafe-sysctls entry (policy validation's
// SysctlContainSlashPatternFmt): a sysctl name, or a prefix of one ending in "*".
var sysctlPattern = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`)

// sysctlMaxLength is the API's limit on a sysctl name.
const sysctlMaxLength = 253

// sysctlAllowlist is the kubelet's patternAllowlist: the sysctls a pod may set, each with its
// namespace; a pod sharing the host's network (IPC) namespace may set none of that namespace.
type sysctlAllowlist struct {
	sysctls  map[string]string
	prefixes map[string]string
}

// newSysctlAllowlist is the safe sysctls for kernel (nil: those needing no particular
// version) and the unsafe patterns allowed (--allowed-unsafe-sysctls), refusing a pattern the
// kubelet refuses, named.
func newSysctlAllowlist(kernel *version.Version, unsafe []string) (*sysctlAllowlist, error) {
	w := &sysctlAllowlist{sysctls: map[string]string{}, prefixes: map[string]string{}}
	var patterns []string
	for _, s := range safeSysctls {
		if s.kernel == "" || (kernel != nil && kernel.AtLeast(version.MustParseGeneric(s.kernel))) {
			patterns = append(patterns, s.name)
		}
	}
	for _, s := range append(patterns, unsafe...) {
		if len(s) > sysctlMaxLength || !sysctlPattern.MatchString(s) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s",
				s, sysctlMaxLength, sysctlPattern)
		}
		name, prefixed := normalizeSysctl(s), false
		if i := strings.IndexByte(name, '*'); i != -1 {
			name, prefixed = name[:i], true
		}
		ns := sysctlNamespace(name)
		if ns == "" {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced: a pod may not set them", name)
		}
		if prefixed {
			w.prefixes[name] = ns
		} else {
			w.sysctls[name] = ns
		}
	}
	return w, nil
}

// ValidateAllowedUnsafeSysctls checks --allowed-unsafe-sysctls as the kubelet does at start-up:
// each a sysctl name or a prefix ending in "*", of a namespaced sysctl.
func ValidateAllowedUnsafeSysctls(patterns []string) error {
	_, err := newSysctlAllowlist(nil, patterns)
	return err
}

// check is the kubelet's validateSysctl.
func (w *sysctlAllowlist) check(sysctl string, hostNet, hostIPC bool) error {
	sysctl = normalizeSysctl(sysctl)
	ns, found := w.sysctls[sysctl]
	if !found {
		for p, pns := range w.prefixes {
			if strings.HasPrefix(sysctl, p) {
				ns, found = pns, true
				break
			}
		}
	}
	switch {
	case !found:
		return fmt.Errorf("%q not allowlisted", sysctl)
	case ns == "IPC" && hostIPC, ns == "Net" && hostNet:
		return fmt.Errorf("%q not allowed with host %s enabled", sysctl, ns)
	}
	return nil
}

// admit refuses a pod with a sysctl the allowlist does not hold, as the kubelet's sysctl
// admission handler: reason SysctlForbidden, message "forbidden sysctl: ...". The kubelet names
// no field and no flag; the sysctl is named, and --allowed-unsafe-sysctls is what allows it.
func (w *sysctlAllowlist) admit(pod *corev1.Pod) error {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		if err := w.check(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC); err != nil {
			return &Refusal{Reason: ReasonSysctlForbidden, Message: fmt.Sprintf("forbidden sysctl: %v", err)}
		}
	}
	return nil
}

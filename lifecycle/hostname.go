package lifecycle

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// hostnameMaxLen is the longest hostname the kernel takes (sethostname: 64 bytes with the
// terminating NUL); runc fails a longer one with "sethostname: invalid argument".
const hostnameMaxLen = 63

// fqdnMaxLen is the longest setHostnameAsFQDN name the kubelet sets (its GetNodenameForKernel).
const fqdnMaxLen = 64

// podHostname is the hostname of a pod on a network of its own, as the kubelet's
// GeneratePodHostNameAndDomain: spec.hostnameOverride when set, else spec.hostname, else the
// pod's name — cut to 63 characters without a trailing '-' or '.', as the kubelet's
// truncatePodHostnameIfNeeded does (a pod name may be 253 long). The API server has
// validated the fields (a DNS subdomain for the override, a DNS label for hostname), so a
// valid name stays valid once cut.
func podHostname(pod *corev1.Pod) string {
	hostname := pod.Name
	switch {
	case pod.Spec.HostnameOverride != nil && *pod.Spec.HostnameOverride != "":
		hostname = *pod.Spec.HostnameOverride
	case pod.Spec.Hostname != "":
		hostname = pod.Spec.Hostname
	}
	return truncateHostname(hostname)
}

// podDomain is the pod's domain, the kubelet's: "<subdomain>.<namespace>.svc.<clusterDomain>"
// with spec.subdomain, "" without it or with a hostnameOverride (which names the pod whole).
func podDomain(pod *corev1.Pod, clusterDomain string) string {
	if pod.Spec.Subdomain == "" || (pod.Spec.HostnameOverride != nil && *pod.Spec.HostnameOverride != "") {
		return ""
	}
	return fmt.Sprintf("%s.%s.svc.%s", pod.Spec.Subdomain, pod.Namespace, clusterDomain)
}

// kernelHostname is the name the sandbox sets (the kubelet's GetNodenameForKernel): the pod's
// hostname, or with setHostnameAsFQDN and a domain, hostname.domain — an error when that is
// longer than the 64 characters the kubelet allows.
func kernelHostname(pod *corev1.Pod, clusterDomain string) (string, error) {
	hostname, domain := podHostname(pod), podDomain(pod, clusterDomain)
	if domain == "" || pod.Spec.SetHostnameAsFQDN == nil || !*pod.Spec.SetHostnameAsFQDN {
		return hostname, nil
	}
	fqdn := hostname + "." + domain
	if len(fqdn) > fqdnMaxLen {
		return "", fmt.Errorf("failed to construct FQDN from pod hostname and cluster domain, FQDN %s is too long (%d characters is the max, %d characters requested)", fqdn, fqdnMaxLen, len(fqdn))
	}
	return fqdn, nil
}

// truncateHostname cuts hostname to hostnameMaxLen, then trims the '-' and '.' that would end
// it; a name of nothing but those is kept whole (the kubelet refuses it; the runtime will).
func truncateHostname(hostname string) string {
	if len(hostname) <= hostnameMaxLen {
		return hostname
	}
	if cut := strings.TrimRight(hostname[:hostnameMaxLen], "-."); cut != "" {
		return cut
	}
	return hostname
}

package lifecycle

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/lifecycle/env"
)

// runSandbox creates the pod's sandbox.
func (p *Provider) runSandbox(ctx context.Context, uid types.UID) bool {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return false
	}
	pod := st.allocatedPod() // the pod's own limits (the process runtime's pod cgroup)
	p.mu.Unlock()

	cfg := sandboxConfig(pod, p.podLogDir(pod))
	hostname, err := kernelHostname(pod, p.cfg.ClusterDomain)
	if err == nil {
		cfg.Hostname = hostname
		cfg.DNS, err = p.podDNS(pod)
	}
	if err == nil {
		cfg.RuntimeHandler, err = p.runtimeHandler(ctx, pod)
	}
	var id string
	if err == nil {
		id, err = p.rt.RunSandbox(ctx, cfg)
	}
	var ips []string
	var unremoved string
	if err == nil && !pod.Spec.HostNetwork {
		if ips, err = p.sandboxIPs(ctx, id); err != nil {
			// A sandbox whose addresses are unknown would give the pod the node's (see
			// podIPsLocked): it goes, and the next try makes another.
			if rerr := p.dropSandbox(ctx, id); rerr != nil {
				// Not forgotten: the pod's next syncs try again ([Provider.removeLeftovers]).
				klog.FromContext(ctx).Error(rerr, "Removing a sandbox whose addresses are unknown; tried again", "sandboxID", id)
				unremoved = id
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if unremoved != "" {
		st.leftovers.sandboxes = append(st.leftovers.sandboxes, unremoved)
	}
	if err != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", "Failed to create pod sandbox: %v", err)
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		return false
	}
	st.sandboxID, st.podIPs = id, ips
	return true
}

// podDNS is pod's resolver configuration (Config.DNS), nil without a configurer; what the
// kubelet warns about as it makes it (cluster DNS missing, limits exceeded) is a Warning event
// on the pod.
func (p *Provider) podDNS(pod *corev1.Pod) (*dns.Config, error) {
	if p.cfg.DNS == nil {
		return nil, nil
	}
	cfg, warnings, err := p.cfg.DNS.PodDNS(pod)
	for _, w := range warnings {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, w.Reason, w.Message)
	}
	return cfg, err
}

// sandboxIPs are the addresses the runtime gave a sandbox on the pod network: none from a
// runtime whose pods share the host's network. An error when the runtime cannot say.
func (p *Provider) sandboxIPs(ctx context.Context, id string) ([]string, error) {
	if r, ok := p.rt.(SandboxAddresser); ok {
		ips, err := r.SandboxIPs(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("reading the addresses of sandbox %s: %w", id, err)
		}
		return ips, nil
	}
	sandboxes, err := p.rt.ListSandboxes(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the addresses of sandbox %s: %w", id, err)
	}
	for _, sb := range sandboxes {
		if sb.ID == id {
			return sb.IPs, nil
		}
	}
	return nil, fmt.Errorf("reading the addresses of sandbox %s: the runtime does not list it", id)
}

func sandboxConfig(pod *corev1.Pod, logDir string) *SandboxConfig {
	cfg := &SandboxConfig{
		PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name,
		Hostname: podHostname(pod), HostNetwork: pod.Spec.HostNetwork,
		Labels:       map[string]string{LabelPodUID: string(pod.UID), LabelPodName: pod.Name, LabelPodNamespace: pod.Namespace},
		LogDirectory: logDir,
		Pod:          pod,
	}
	for _, c := range pod.Spec.Containers {
		for _, port := range c.Ports {
			cfg.Ports = append(cfg.Ports, PortMapping{Protocol: string(port.Protocol), ContainerPort: port.ContainerPort, HostPort: port.HostPort, HostIP: port.HostIP})
		}
	}
	return cfg
}

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

// podIPsLocked are the pod's addresses, as the kubelet reports them: a pod on the host's
// network has the node's; a pod on a network of its own has its sandbox's, and none until the
// sandbox exists — never the node's meanwhile, which the API server would then hold beside
// the sandbox's (two addresses of one family: every later status write refused). A sandbox
// that reports none is on the host's network after all (a runtime of host processes): the
// node's.
func (p *Provider) podIPsLocked(st *podState) []string {
	switch {
	case st.pod.Spec.HostNetwork:
		return p.cfg.NodeIPs
	case st.sandboxID == "":
		return nil
	case len(st.podIPs) > 0:
		return st.podIPs
	}
	return p.cfg.NodeIPs
}

// podIP is the pod's first address now, "" while it has none: what probes and hooks reach
// when their action names no host (the kubelet's status.podIP).
func (p *Provider) podIP(uid types.UID) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[uid]
	if !ok {
		return ""
	}
	if ips := p.podIPsLocked(st); len(ips) > 0 {
		return ips[0]
	}
	return ""
}

// runtimeHandler is the handler of pod's RuntimeClass (SandboxConfig.RuntimeHandler), as the
// kubelet's RuntimeClass manager looks it up (LookupRuntimeHandler): "" for a pod that names
// none, and for every pod without Config.RuntimeClasses (standalone, where the kubelet has no
// manager). A RuntimeClass that does not exist is the kubelet's error, worded as its informer
// cache words it (runtimeclass.node.k8s.io "NAME" not found); the sandbox then fails and is
// tried again, as the kubelet's.
func (p *Provider) runtimeHandler(ctx context.Context, pod *corev1.Pod) (string, error) {
	if p.cfg.RuntimeClasses == nil || pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName == "" {
		return "", nil
	}
	name := *pod.Spec.RuntimeClassName
	rc, err := p.copies.RuntimeClasses(pod).GetRuntimeClass(ctx, name)
	if apierrors.IsNotFound(err) {
		return "", apierrors.NewNotFound(nodev1.Resource("runtimeclass"), name)
	}
	if err != nil {
		return "", fmt.Errorf("failed to lookup RuntimeClass %s: %w", name, err)
	}
	if rc.Handler != "" {
		klog.FromContext(ctx).V(2).Info("Running pod with runtime handler", "pod", klog.KObj(pod), "runtimeHandler", rc.Handler)
	}
	return rc.Handler, nil
}

// factsLocked is what the downward API reads that the pod object does not hold.
func (p *Provider) factsLocked(st *podState) env.PodFacts {
	f := env.PodFacts{HostIPs: p.cfg.NodeIPs, PodIPs: p.podIPsLocked(st), Allocatable: p.cfg.Allocatable, VolumeDirs: st.volumes}
	if len(f.HostIPs) > 0 {
		f.HostIP = f.HostIPs[0]
	}
	if len(f.PodIPs) > 0 {
		f.PodIP = f.PodIPs[0]
	}
	return f
}

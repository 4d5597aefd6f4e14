package dns

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's limits (the API's validation.MaxDNSNameservers, MaxDNSSearchPaths,
// MaxDNSSearchListChars and a DNS-1123 subdomain's length), and the options a pod on the
// cluster's DNS gets.
const (
	maxNameservers     = 3
	maxSearchPaths     = 32
	maxSearchListChars = 2048
	maxSearchPathChars = 253
)

var clusterOptions = []string{"ndots:5"}

// Event reasons of the warnings PodDNS returns, the kubelet's.
const (
	ReasonMissingClusterDNS = "MissingClusterDNS"
	ReasonDNSConfigForming  = "DNSConfigForming"
)

// Warning is something PodDNS did that the pod's owner should know, as the kubelet posts it:
// a Warning event on the pod with Reason and Message.
type Warning struct {
	Reason, Message string
}

// Configurer makes pods' resolver configurations as the kubelet does.
type Configurer struct {
	// ClusterDNS are the cluster DNS servers' addresses (--cluster-dns); none makes a pod of
	// dnsPolicy ClusterFirst fall back to Default, with a warning.
	ClusterDNS []string
	// ClusterDomain is the cluster's domain (--cluster-domain), from which a ClusterFirst pod's
	// search list is made.
	ClusterDomain string
	// ResolvConf is the host's resolver configuration the pods' is based on (--resolv-conf);
	// "" gives pods of dnsPolicy Default a resolver on their own loopback and no search list,
	// as the kubelet does.
	ResolvConf string
	// UpstreamResolvConf is read instead of ResolvConf for a pod off the host's network when
	// ResolvConf names only resolvers on the host's loopback, which such a pod cannot reach
	// (systemd-resolved's 127.0.0.53): systemd-resolved's list of the servers it forwards to,
	// /run/systemd/resolve/resolv.conf, as kubeadm sets --resolv-conf on such a host. ""
	// never reads another.
	UpstreamResolvConf string
	// NodeIPs are the node's addresses: with ResolvConf "", a Default pod gets the loopback
	// of each one's family.
	NodeIPs []string
}

// PodDNS is pod's resolver configuration, the kubelet's GetPodDNS:
//   - dnsPolicy ClusterFirst (off the host's network) and ClusterFirstWithHostNet: the cluster
//     DNS servers, the search list <namespace>.svc.<domain> svc.<domain> <domain> then the
//     host's, and ndots:5;
//   - Default (and ClusterFirst on the host's network, and ClusterFirst without cluster DNS,
//     with a MissingClusterDNS warning): the host's;
//   - None: nothing but spec.dnsConfig;
//
// then spec.dnsConfig's servers, searches and options merged in, and the result cut to three
// servers and the kubelet's search list limits (a DNSConfigForming warning says what was cut).
func (c *Configurer) PodDNS(pod *corev1.Pod) (*Config, []Warning, error) {
	var warnings []Warning
	cfg := &Config{}
	if pod.Spec.DNSPolicy != corev1.DNSNone {
		host, err := c.hostConfig(pod.Spec.HostNetwork)
		if err != nil {
			return nil, nil, err
		}
		cfg = host
	}
	switch policy(pod) {
	case corev1.DNSClusterFirst:
		if len(c.ClusterDNS) > 0 {
			cfg.Servers = append([]string(nil), c.ClusterDNS...)
			cfg.Searches = c.clusterSearches(pod.Namespace, cfg.Searches)
			cfg.Options = append([]string(nil), clusterOptions...)
			break
		}
		msg := fmt.Sprintf("kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.", corev1.DNSClusterFirst, corev1.DNSDefault)
		warnings = append(warnings, Warning{Reason: ReasonMissingClusterDNS, Message: fmt.Sprintf("pod: %q. %s", pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", msg)})
		fallthrough
	case corev1.DNSDefault:
		if c.ResolvConf == "" {
			cfg.Servers, cfg.Searches = loopbacks(c.NodeIPs), []string{"."}
		}
	}
	if d := pod.Spec.DNSConfig; d != nil {
		cfg.Servers = withoutDuplicates(append(cfg.Servers, d.Nameservers...))
		cfg.Searches = withoutDuplicates(append(cfg.Searches, d.Searches...))
		cfg.Options = mergeOptions(cfg.Options, podOptions(d.Options))
	}
	if len(cfg.Servers) > maxNameservers {
		cfg.Servers = cfg.Servers[:maxNameservers]
		warnings = append(warnings, Warning{Reason: ReasonDNSConfigForming,
			Message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(cfg.Servers, " ")})
	}
	var cut bool
	if cfg.Searches, cut = fitSearches(cfg.Searches); cut {
		warnings = append(warnings, Warning{Reason: ReasonDNSConfigForming,
			Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(cfg.Searches, " ")})
	}
	return cfg, warnings, nil
}

// policy is the policy pod's configuration follows: ClusterFirst for ClusterFirstWithHostNet
// and for ClusterFirst off the host's network (and, as the kubelet, for a policy it does not
// know), Default for ClusterFirst on it.
func policy(pod *corev1.Pod) corev1.DNSPolicy {
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone, corev1.DNSDefault:
		return pod.Spec.DNSPolicy
	case corev1.DNSClusterFirst, "":
		if pod.Spec.HostNetwork {
			return corev1.DNSDefault
		}
	}
	return corev1.DNSClusterFirst
}

// clusterSearches is a ClusterFirst pod's search list: the cluster's domains for namespace,
// then host's.
func (c *Configurer) clusterSearches(namespace string, host []string) []string {
	if c.ClusterDomain == "" {
		return host
	}
	cluster := []string{namespace + ".svc." + c.ClusterDomain, "svc." + c.ClusterDomain, c.ClusterDomain}
	return withoutDuplicates(append(cluster, host...))
}

// hostConfig is the host's resolver configuration; empty without ResolvConf.
func (c *Configurer) hostConfig(hostNetwork bool) (*Config, error) {
	if c.ResolvConf == "" {
		return &Config{}, nil
	}
	cfg, err := readConfig(c.ResolvConf)
	if err != nil {
		return nil, err
	}
	if hostNetwork || c.UpstreamResolvConf == "" || !onlyLoopback(cfg.Servers) {
		return cfg, nil
	}
	upstream, err := readConfig(c.UpstreamResolvConf)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, nil // no systemd-resolved: the loopback resolver is what there is
	}
	if err != nil {
		return nil, err
	}
	// systemd-resolved's file lists the servers it forwards to; the search list stays the
	// host's.
	cfg.Servers = upstream.Servers
	return cfg, nil
}

// readConfig reads and parses the resolv.conf at path; an error names it.
func readConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the resolver configuration (--resolv-conf): %w", err)
	}
	defer f.Close()
	cfg, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("the resolver configuration %s (--resolv-conf): %w", path, err)
	}
	return cfg, nil
}

// onlyLoopback is whether servers are all on the loopback (and there is one).
func onlyLoopback(servers []string) bool {
	for _, s := range servers {
		if ip := net.ParseIP(s); ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return len(servers) > 0
}

// loopbacks are the resolvers a pod gets without a resolver configuration, as the kubelet
// gives them: the loopback of each node address's family (127.0.0.1 without any).
func loopbacks(nodeIPs []string) []string {
	var out []string
	for _, s := range nodeIPs {
		if ip := net.ParseIP(s); ip != nil && ip.To4() == nil {
			out = append(out, "::1")
		} else {
			out = append(out, "127.0.0.1")
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1"}
	}
	return out
}

// fitSearches cuts searches to the kubelet's limits: 32 paths, none over 253 characters, and
// 2048 characters in all (paths dropped from the end); cut says whether anything went.
func fitSearches(searches []string) (_ []string, cut bool) {
	if len(searches) > maxSearchPaths {
		searches, cut = searches[:maxSearchPaths], true
	}
	kept := searches[:0:0]
	for _, s := range searches {
		if len(s) > maxSearchPathChars {
			cut = true
			continue
		}
		kept = append(kept, s)
	}
	for len(kept) > 0 && len(strings.Join(kept, " ")) > maxSearchListChars {
		kept, cut = kept[:len(kept)-1], true
	}
	return kept, cut
}

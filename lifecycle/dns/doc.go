// Package dns is the kubelet's pod DNS (pkg/kubelet/network/dns): the resolver configuration
// a pod gets from its dnsPolicy and dnsConfig, the node's cluster DNS (--cluster-dns,
// --cluster-domain) and the host's resolver configuration (--resolv-conf), cut to the limits
// the kubelet cuts it to. The runtime writes it: CRI hands it to the sandbox, the process
// runtime writes the pod's /etc/resolv.conf from it (Config.ResolvConf).
//
//	c := dns.Configurer{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResolvConf: "/etc/resolv.conf"}
//	cfg, warnings, err := c.PodDNS(pod)
//	os.WriteFile(path, cfg.ResolvConf(), 0o644)
package dns

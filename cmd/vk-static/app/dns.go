package app

import (
	"net/netip"
	"strings"

	"github.com/spf13/pflag"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/vk-static/vk-static/lifecycle/dns"
)

// addDNSFlags registers the kubelet's --cluster-domain, --cluster-dns and --resolv-conf.
func (o *options) addDNSFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain,
		"The cluster's DNS domain (e.g. cluster.local): a pod of dnsPolicy ClusterFirst searches NAMESPACE.svc.DOMAIN, svc.DOMAIN and DOMAIN, and a pod with spec.subdomain is HOSTNAME.SUBDOMAIN.NAMESPACE.svc.DOMAIN in its /etc/hosts, and its hostname with setHostnameAsFQDN.")
	fs.StringSliceVar(&o.ClusterDNS, "cluster-dns", o.ClusterDNS,
		"The cluster DNS servers' addresses (comma-separated, e.g. 10.96.0.10): the resolvers of pods of dnsPolicy ClusterFirst, and of ClusterFirstWithHostNet on the host's network, with options ndots:5. Without it such pods fall back to dnsPolicy Default, with a MissingClusterDNS warning, as the kubelet's.")
	fs.StringVar(&o.ResolvConf, "resolv-conf", o.ResolvConf,
		"The resolver configuration that pods' is based on: the resolvers of dnsPolicy Default pods, and the search domains after the cluster's. \"\" gives Default pods a resolver on their own loopback. When it names only resolvers on the host's loopback (systemd-resolved's 127.0.0.53), pods off the host's network, which cannot reach those, get the servers in "+dns.ResolvedResolvConf+" instead.")
}

// validateDNS refuses what cannot be a DNS domain or a server's address.
func (o *options) validateDNS(bad func(flag, format string, args ...any)) {
	if o.ClusterDomain != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(o.ClusterDomain); len(msgs) > 0 {
			bad("cluster-domain", "%q is not a DNS domain: %s", o.ClusterDomain, strings.Join(msgs, "; "))
		}
	}
	for _, s := range o.ClusterDNS {
		if _, err := netip.ParseAddr(s); err != nil {
			bad("cluster-dns", "%q is not an IP address", s)
		}
	}
}

// dnsConfigurer makes the pods' resolver configurations from the DNS flags.
func (o *options) dnsConfigurer() *dns.Configurer {
	return &dns.Configurer{ClusterDNS: o.ClusterDNS, ClusterDomain: o.ClusterDomain, ResolvConf: o.ResolvConf, UpstreamResolvConf: dns.ResolvedResolvConf}
}

package app

import (
	"strings"

	"github.com/spf13/pflag"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// addClusterDomainFlags registers the kubelet's --cluster-domain: the DNS domain of the
// cluster, which a pod with spec.subdomain is named in (its /etc/hosts, and its hostname with
// setHostnameAsFQDN).
func (o *options) addClusterDomainFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain,
		"The cluster's DNS domain (e.g. cluster.local): a pod with spec.subdomain is HOSTNAME.SUBDOMAIN.NAMESPACE.svc.DOMAIN in its /etc/hosts, and its hostname with setHostnameAsFQDN.")
}

// validateClusterDomain refuses what cannot be a DNS domain.
func (o *options) validateClusterDomain(bad func(flag, format string, args ...any)) {
	if o.ClusterDomain == "" {
		return
	}
	if msgs := utilvalidation.IsDNS1123Subdomain(o.ClusterDomain); len(msgs) > 0 {
		bad("cluster-domain", "%q is not a DNS domain: %s", o.ClusterDomain, strings.Join(msgs, "; "))
	}
}

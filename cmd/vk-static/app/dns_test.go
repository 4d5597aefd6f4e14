package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterDomainFlag(t *testing.T) {
	o, err := parse(t, "--cluster-domain", "cluster.local")
	require.NoError(t, err)
	assert.Equal(t, "cluster.local", o.ClusterDomain)

	_, err = parse(t, "--cluster-domain", "Not_A.Domain")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--cluster-domain")
	assert.Contains(t, err.Error(), "is not a DNS domain")
}

// --cluster-dns and --resolv-conf, as flags and as the kubelet's clusterDNS and resolvConf,
// reach the pods' DNS configurer; the kubelet's default resolv.conf without them.
func TestClusterDNSFlags(t *testing.T) {
	o, err := parse(t)
	require.NoError(t, err)
	assert.Empty(t, o.dnsConfigurer().ClusterDNS)
	assert.Equal(t, "/etc/resolv.conf", o.dnsConfigurer().ResolvConf)

	o, err = parse(t, "--cluster-dns", "10.96.0.10,fd00::a", "--cluster-domain", "cluster.local", "--resolv-conf", "")
	require.NoError(t, err)
	c := o.dnsConfigurer()
	assert.Equal(t, []string{"10.96.0.10", "fd00::a"}, c.ClusterDNS)
	assert.Equal(t, "cluster.local", c.ClusterDomain)
	assert.Empty(t, c.ResolvConf)

	_, err = parse(t, "--cluster-dns", "dns.example")
	assert.ErrorContains(t, err, `--cluster-dns: "dns.example" is not an IP address`)

	config := filepath.Join(t.TempDir(), "kubelet.yaml")
	require.NoError(t, os.WriteFile(config, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local\nresolvConf: /run/systemd/resolve/resolv.conf\n"), 0o600))
	o, err = parse(t, "--config", config)
	require.NoError(t, err)
	c = o.dnsConfigurer()
	assert.Equal(t, []string{"10.96.0.10"}, c.ClusterDNS)
	assert.Equal(t, "/run/systemd/resolve/resolv.conf", c.ResolvConf)
}

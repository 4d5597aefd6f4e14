package dns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "resolv.conf")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func pod(policy corev1.DNSPolicy, hostNetwork bool, cfg *corev1.PodDNSConfig) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u1"},
		Spec:       corev1.PodSpec{DNSPolicy: policy, HostNetwork: hostNetwork, DNSConfig: cfg},
	}
}

// Each dnsPolicy as the kubelet's GetPodDNS makes it, on a host whose resolv.conf searches
// corp.example and names 192.0.2.53.
func TestPodDNS(t *testing.T) {
	host := writeFile(t, "# the host's\nnameserver 192.0.2.53\nsearch corp.example.\noptions timeout:2\n")
	cluster := &Configurer{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResolvConf: host}
	clusterSearch := []string{"shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "corp.example"}
	hostConfig := &Config{Servers: []string{"192.0.2.53"}, Searches: []string{"corp.example"}, Options: []string{"timeout:2"}}

	for _, tc := range []struct {
		name     string
		c        *Configurer
		pod      *corev1.Pod
		want     *Config
		warnings []string
	}{
		{name: "ClusterFirst", c: cluster, pod: pod(corev1.DNSClusterFirst, false, nil),
			want: &Config{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{name: "unset is ClusterFirst", c: cluster, pod: pod("", false, nil),
			want: &Config{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{name: "ClusterFirstWithHostNet on the host's network", c: cluster, pod: pod(corev1.DNSClusterFirstWithHostNet, true, nil),
			want: &Config{Servers: []string{"10.96.0.10"}, Searches: clusterSearch, Options: []string{"ndots:5"}}},
		{name: "ClusterFirst on the host's network is Default", c: cluster, pod: pod(corev1.DNSClusterFirst, true, nil), want: hostConfig},
		{name: "Default", c: cluster, pod: pod(corev1.DNSDefault, false, nil), want: hostConfig},
		{name: "ClusterFirst without cluster DNS falls back to Default", c: &Configurer{ClusterDomain: "cluster.local", ResolvConf: host},
			pod: pod(corev1.DNSClusterFirst, false, nil), want: hostConfig,
			warnings: []string{`MissingClusterDNS: pod: "web_shop(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`}},
		{name: "None takes dnsConfig alone", c: cluster,
			pod:  pod(corev1.DNSNone, false, &corev1.PodDNSConfig{Nameservers: []string{"203.0.113.1"}, Searches: []string{"a.example"}, Options: []corev1.PodDNSConfigOption{{Name: "edns0"}}}),
			want: &Config{Servers: []string{"203.0.113.1"}, Searches: []string{"a.example"}, Options: []string{"edns0"}}},
		{name: "dnsConfig merged in", c: cluster,
			pod: pod(corev1.DNSClusterFirst, false, &corev1.PodDNSConfig{Nameservers: []string{"10.96.0.10", "203.0.113.1"},
				Searches: []string{"svc.cluster.local", "b.example"}, Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}, {Name: "edns0"}}}),
			want: &Config{Servers: []string{"10.96.0.10", "203.0.113.1"}, Searches: append(clusterSearch, "b.example"), Options: []string{"edns0", "ndots:2"}}},
		{name: "Default without a resolver configuration", c: &Configurer{NodeIPs: []string{"192.0.2.1", "2001:db8::1"}},
			pod: pod(corev1.DNSDefault, false, nil), want: &Config{Servers: []string{"127.0.0.1", "::1"}, Searches: []string{"."}}},
		{name: "more than three nameservers", c: cluster,
			pod:      pod(corev1.DNSClusterFirst, false, &corev1.PodDNSConfig{Nameservers: []string{"203.0.113.1", "203.0.113.2", "203.0.113.3"}}),
			want:     &Config{Servers: []string{"10.96.0.10", "203.0.113.1", "203.0.113.2"}, Searches: clusterSearch, Options: []string{"ndots:5"}},
			warnings: []string{"DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.96.0.10 203.0.113.1 203.0.113.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings, err := tc.c.PodDNS(tc.pod)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			var ws []string
			for _, w := range warnings {
				ws = append(ws, w.Reason+": "+w.Message)
			}
			assert.Equal(t, tc.warnings, ws)
		})
	}
}

// The search list is cut as the kubelet cuts it: 32 paths, none longer than 253 characters,
// 2048 characters in all.
func TestSearchLimits(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf("d%d.example", i)
	}
	got, cut := fitSearches(many)
	assert.True(t, cut)
	assert.Equal(t, many[:32], got)

	long := strings.Repeat("a", 254)
	got, cut = fitSearches([]string{"a.example", long, "b.example"})
	assert.True(t, cut)
	assert.Equal(t, []string{"a.example", "b.example"}, got)

	wide := make([]string, 10)
	for i := range wide {
		wide[i] = strings.Repeat(string(rune('a'+i)), 250)
	}
	got, cut = fitSearches(wide)
	assert.True(t, cut)
	assert.Len(t, got, 8, "8 of 251 characters with their spaces fit in 2048")

	got, cut = fitSearches([]string{"a.example"})
	assert.False(t, cut)
	assert.Equal(t, []string{"a.example"}, got)
}

// A pod off the host's network cannot reach a resolver on the host's loopback: on a host of
// systemd-resolved it gets the servers resolved forwards to; on the host's network, or
// without resolved's list, the host's.
func TestUpstreamResolvConf(t *testing.T) {
	host := writeFile(t, "nameserver 127.0.0.53\nsearch corp.example\n")
	upstream := writeFile(t, "nameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch other.example\n")
	c := &Configurer{ResolvConf: host, UpstreamResolvConf: upstream}
	got, _, err := c.PodDNS(pod(corev1.DNSDefault, false, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"192.0.2.53", "192.0.2.54"}, got.Servers)
	assert.Equal(t, []string{"corp.example"}, got.Searches, "the host's search list")

	got, _, err = c.PodDNS(pod(corev1.DNSDefault, true, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.53"}, got.Servers, "on the host's network the loopback resolver is reachable")

	c.UpstreamResolvConf = filepath.Join(t.TempDir(), "missing")
	got, _, err = c.PodDNS(pod(corev1.DNSDefault, false, nil))
	require.NoError(t, err)
	assert.Equal(t, []string{"127.0.0.53"}, got.Servers)
}

// An unreadable or malformed resolver configuration is an error naming it and the flag.
func TestResolvConfErrors(t *testing.T) {
	c := &Configurer{ResolvConf: filepath.Join(t.TempDir(), "missing")}
	_, _, err := c.PodDNS(pod(corev1.DNSDefault, false, nil))
	assert.ErrorContains(t, err, "--resolv-conf")

	c.ResolvConf = writeFile(t, "nameserver\n")
	_, _, err = c.PodDNS(pod(corev1.DNSDefault, false, nil))
	assert.ErrorContains(t, err, c.ResolvConf)
}

func TestParse(t *testing.T) {
	cfg, err := parse(strings.NewReader("nameserver 1.1.1.1\n  # a comment\nsearch a.example b.example\nsearch c.example. .\noptions ndots:2 timeout:1\noptions ndots:3\nnameserver 8.8.8.8\n"))
	require.NoError(t, err)
	assert.Equal(t, &Config{Servers: []string{"1.1.1.1", "8.8.8.8"}, Searches: []string{"c.example"}, Options: []string{"ndots:3", "timeout:1"}}, cfg)
}

func TestResolvConf(t *testing.T) {
	c := &Config{Servers: []string{"10.96.0.10"}, Searches: []string{"shop.svc.cluster.local", "svc.cluster.local"}, Options: []string{"ndots:5"}}
	assert.Equal(t, "search shop.svc.cluster.local svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n", string(c.ResolvConf()))
}

package lifecycle

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle/dns"
)

// The sandbox gets the pod's resolver configuration from Config.DNS, its search list in the
// cluster's domain (Config.ClusterDomain); what the kubelet warns about is a Warning event on
// the pod.
func TestSandboxDNS(t *testing.T) {
	h := newHarness(t)
	h.stop()
	h.configure = func(c *Config) {
		c.ClusterDomain = "cluster.local"
		c.DNS = &dns.Configurer{ClusterDNS: []string{"10.96.0.10"}}
	}
	h.start()
	ctx := context.Background()

	pod := testPod("dns", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	pod.Spec.DNSPolicy = corev1.DNSClusterFirst
	require.NoError(t, h.p.CreatePod(ctx, pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	h.rt.mu.Lock()
	got := h.rt.sandboxDNS[pod.Name]
	h.rt.mu.Unlock()
	assert.Equal(t, &dns.Config{Servers: []string{"10.96.0.10"}, Searches: []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}}, got)

	wide := testPod("wide", corev1.RestartPolicyAlways, ctr("app", "sleep", "1000"))
	wide.Spec.DNSPolicy = corev1.DNSNone
	wide.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"}}
	require.NoError(t, h.p.CreatePod(ctx, wide))
	h.eventually(wide.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	assert.Contains(t, strings.Join(h.drainEvents(), "\n"),
		"Warning DNSConfigForming Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 192.0.2.1 192.0.2.2 192.0.2.3")
}

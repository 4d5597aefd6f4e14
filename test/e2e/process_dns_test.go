package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/test/support/podwait"
)

// With the cluster's DNS given (--cluster-dns, --cluster-domain), an API pod of dnsPolicy
// ClusterFirstWithHostNet on the host's network resolves through it, as the kubelet's: its
// /etc/resolv.conf searches the cluster's domains first, names the cluster's server alone, and
// sets ndots:5. One of ClusterFirst on the host's network keeps the host's resolvers.
func TestProcessClusterDNS(t *testing.T) {
	t.Parallel()
	a := startProcessAgent(t, "--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local")
	ctx := context.Background()
	ns := env.Namespace(t)
	pods := env.Admin.CoreV1().Pods(ns)
	resolvConf := func(name string, policy corev1.DNSPolicy) string {
		t.Helper()
		_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
			NodeName: a.Node, HostNetwork: true, DNSPolicy: policy,
			TerminationGracePeriodSeconds: ptr.To[int64](1), AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: shell(`cat /etc/resolv.conf; exec sleep 1000`)}},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		podwait.Until(t, env.Admin, ns, name, 30*time.Second, "Running", podwait.MainRunning)
		var logs string
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var err error
			logs, err = podLogs(ctx, ns, name, &corev1.PodLogOptions{Container: "main"})
			require.NoError(c, err)
			assert.Contains(c, logs, "nameserver")
		}, 10*time.Second, 100*time.Millisecond)
		return logs
	}

	cluster := resolvConf("cluster", corev1.DNSClusterFirstWithHostNet)
	assert.Contains(t, cluster, "search "+ns+".svc.cluster.local svc.cluster.local cluster.local")
	assert.Contains(t, cluster, "nameserver 10.96.0.10\n")
	assert.Equal(t, 1, strings.Count(cluster, "nameserver"), "the cluster's server alone: %s", cluster)
	assert.Contains(t, cluster, "options ndots:5")

	host := resolvConf("host", corev1.DNSClusterFirst)
	assert.NotContains(t, host, "10.96.0.10")
	assert.NotContains(t, host, "cluster.local")

	for _, name := range []string{"cluster", "host"} {
		require.NoError(t, pods.Delete(ctx, name, metav1.DeleteOptions{}))
	}
	for _, name := range []string{"cluster", "host"} {
		podwait.Gone(t, env.Admin, ns, name, 30*time.Second)
	}
}

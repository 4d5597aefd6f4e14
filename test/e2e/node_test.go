package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeRegistersAndRenewsItsLease(t *testing.T) {
	a := startAgent(t, agentOptions{extraArgs: []string{"--node-labels", "team=edge", "--register-with-taints", "dedicated=edge:NoSchedule", "--max-pods", "42"}})
	ctx := context.Background()
	var node *corev1.Node
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				node = n
				return
			}
		}
		c.Errorf("conditions %+v", n.Status.Conditions)
	}, 10*time.Second, 50*time.Millisecond, "node Ready")
	if node.Labels["team"] != "edge" || node.Labels[corev1.LabelHostname] != a.Node {
		t.Errorf("labels %v", node.Labels)
	}
	// The API server's TaintNodesByCondition admission adds node.kubernetes.io/not-ready at
	// registration (the node lifecycle controller, not run here, removes it): ours must be there.
	// The mock provider's taint keeps the scheduler from placing real workloads on a simulator.
	if !hasTaint(node, corev1.Taint{Key: "dedicated", Value: "edge", Effect: corev1.TaintEffectNoSchedule}) ||
		!hasTaint(node, corev1.Taint{Key: "virtual-kubelet.io/provider", Value: "mock", Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("taints %+v", node.Spec.Taints)
	}
	if got := node.Status.Capacity[corev1.ResourcePods]; got.Value() != 42 {
		t.Errorf("pods capacity %s, want 42", got.String())
	}
	// The Node advertises the kubelet API's --port.
	if !hasAddress(node, corev1.NodeInternalIP, "127.0.0.1") || int(node.Status.DaemonEndpoints.KubeletEndpoint.Port) != a.APIPort {
		t.Errorf("addresses %+v endpoint %+v", node.Status.Addresses, node.Status.DaemonEndpoints)
	}

	leases := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	var first metav1.MicroTime
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		l, err := leases.Get(ctx, a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].UID != node.UID {
			c.Errorf("owner references %+v", l.OwnerReferences)
			return
		}
		if first.IsZero() {
			first = *l.Spec.RenewTime
			c.Errorf("first renewal seen")
			return
		}
		if !l.Spec.RenewTime.After(first.Time) {
			c.Errorf("not renewed since %v", first)
		}
	}, 10*time.Second, 50*time.Millisecond, "lease renewed")

	// Stopped, the agent renews no more: the node lifecycle controller (not run here) would
	// mark it NotReady once the lease expires. The lease is watched for half its duration (the
	// agent's short --node-lease-duration-seconds), two renewals of a running agent, and the
	// first renewal fails the test.
	a.Stop()
	l, err := leases.Get(ctx, a.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stoppedAt := *l.Spec.RenewTime
	window := time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second / 2
	for deadline := time.Now().Add(window); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // sampling the window, not waiting for a result
		l, err := leases.Get(ctx, a.Node, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !l.Spec.RenewTime.Equal(&stoppedAt) {
			t.Fatalf("lease renewed after the agent stopped: %v → %v", stoppedAt, l.Spec.RenewTime)
		}
	}
}

func hasAddress(n *corev1.Node, typ corev1.NodeAddressType, addr string) bool {
	for _, a := range n.Status.Addresses {
		if a.Type == typ && a.Address == addr {
			return true
		}
	}
	return false
}

func hasTaint(n *corev1.Node, want corev1.Taint) bool {
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(&want) && t.Value == want.Value {
			return true
		}
	}
	return false
}

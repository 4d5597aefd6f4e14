package e2ecri

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeFollowsTheRuntime: containerd killed under a running pod turns the Node Ready=False
// with the kubelet's "container runtime is down" once the threshold has passed (short here:
// --runtime-status-threshold), /healthz and /readyz say so too, and the Lease is renewed all
// the while (the agent lives); containerd restarted turns the Node Ready again with the same
// container, never restarted.
func TestNodeFollowsTheRuntime(t *testing.T) {
	a := startAgent(t, "--runtime-status-period", "500ms", "--runtime-status-threshold", "3s")
	a.writePod(imagePod("survivor", workloadImage, "sleep"))
	ids := a.runningIDs([]string{"survivor"}, 90*time.Second)
	waitNodeReady(t, a.Node, corev1.ConditionTrue, "KubeletReady", 30*time.Second)
	// Measured, not hard-coded: this machine is under no pressure by the kubelet's defaults;
	// nodeInfo names the runtime as the kubelet does.
	n, err := env.Admin.CoreV1().Nodes().Get(context.Background(), a.Node, metav1.GetOptions{})
	require.NoError(t, err)
	reasons := map[corev1.NodeConditionType]string{}
	for _, c := range n.Status.Conditions {
		reasons[c.Type] = string(c.Status) + " " + c.Reason
	}
	assert.Equal(t, "False KubeletHasSufficientMemory", reasons[corev1.NodeMemoryPressure])
	assert.Equal(t, "False KubeletHasNoDiskPressure", reasons[corev1.NodeDiskPressure])
	assert.Equal(t, "False KubeletHasSufficientPID", reasons[corev1.NodePIDPressure])
	assert.True(t, strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://"), n.Status.NodeInfo.ContainerRuntimeVersion)
	assert.NotEmpty(t, n.Status.NodeInfo.KernelVersion)
	// The runtime's images, listed every status update interval as the kubelet lists them: the
	// pod's image among them, by its tag and its digest.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(context.Background(), a.Node, metav1.GetOptions{})
		require.NoError(c, err)
		listed := listedImage(n, workloadImage)
		require.NotNil(c, listed, "status.images: %v", n.Status.Images)
		assert.Positive(c, listed.SizeBytes)
		assert.True(c, slices.ContainsFunc(listed.Names, func(name string) bool { return strings.Contains(name, "@sha256:") }), "a digest among %v", listed.Names)
	}, 30*time.Second, 200*time.Millisecond, "the Node lists %s", workloadImage)

	killed := time.Now()
	cd.Kill()
	restarted := false
	t.Cleanup(func() { // the package's containerd must run for the next test whatever happened
		if !restarted {
			assert.NoError(t, cd.Restart(context.Background()))
		}
	})
	c := waitNodeReady(t, a.Node, corev1.ConditionFalse, "KubeletNotReady", 30*time.Second)
	assert.Equal(t, "container runtime is down", c.Message)
	t.Logf("NotReady %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body := httpGet(t, a.Healthz+path)
		assert.Equal(t, http.StatusServiceUnavailable, code, "%s: %s", path, body)
		assert.Contains(t, body, "container runtime is down", path)
	}
	// The Lease is the agent's liveness: still renewed while the runtime is down.
	renewed := leaseRenewTime(t, a.Node)
	require.Eventually(t, func() bool { return leaseRenewTime(t, a.Node).After(renewed) }, 30*time.Second, 200*time.Millisecond,
		"the Lease is renewed while containerd is down")

	require.NoError(t, cd.Restart(context.Background()))
	restarted = true
	waitNodeReady(t, a.Node, corev1.ConditionTrue, "KubeletReady", 30*time.Second)
	for _, path := range []string{"/healthz", "/readyz"} {
		code, body := httpGet(t, a.Healthz+path)
		assert.Equal(t, http.StatusOK, code, "%s: %s", path, body)
	}
	assert.Equal(t, ids, a.runningIDs([]string{"survivor"}, 30*time.Second), "the container across containerd's death")

	a.removePods("survivor")
	nothingLeft(t)
}

// waitNodeReady waits until node's Ready condition has status and reason, and returns it.
func waitNodeReady(t *testing.T, node string, status corev1.ConditionStatus, reason string, timeout time.Duration) corev1.NodeCondition {
	t.Helper()
	var got corev1.NodeCondition
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := env.Admin.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		require.NoError(c, err)
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				got = cond
				assert.Equal(c, status, cond.Status, "Ready: %s %s", cond.Reason, cond.Message)
				assert.Equal(c, reason, cond.Reason, "Ready: %s", cond.Message)
				return
			}
		}
		c.Errorf("no Ready condition")
	}, timeout, 100*time.Millisecond, "node %s Ready=%s", node, status)
	return got
}

// listedImage is the entry of n's status.images that names image; nil when none does.
func listedImage(n *corev1.Node, image string) *corev1.ContainerImage {
	for i, img := range n.Status.Images {
		if slices.Contains(img.Names, image) {
			return &n.Status.Images[i]
		}
	}
	return nil
}

func leaseRenewTime(t *testing.T, node string) time.Time {
	t.Helper()
	l, err := env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), node, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, l.Spec.RenewTime)
	return l.Spec.RenewTime.Time
}

// httpGet GETs url and returns the status code and body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // a test's local endpoint
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, strings.TrimSpace(string(body))
}

package agent_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/kubeclient"
)

// nodeRequests counts the requests an agent's client sends about its Node and Lease, by
// "METHOD path" with the query left out (a watch of the Node is "GET /api/v1/nodes").
type nodeRequests struct {
	next   http.RoundTripper
	mu     sync.Mutex
	counts map[string]int
}

func (c *nodeRequests) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/api/v1/nodes") || strings.Contains(r.URL.Path, "/leases") {
		c.mu.Lock()
		c.counts[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
	}
	return c.next.RoundTrip(r)
}

func (c *nodeRequests) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// At rest the agent costs the API server what a kubelet does: it renews its Lease, reads its
// Node from its watch (no GET) and patches the status only once a report period. The intervals
// are the kubelet's scaled down: the status computed as often as the Lease is renewed, and
// reported every four renewals instead of thirty.
func TestAgentAtRestReadsItsNodeFromItsWatch(t *testing.T) {
	const (
		name           = "rest-node"
		renew          = 250 * time.Millisecond // a quarter of the 1 s lease
		reportInterval = time.Second
		window         = 3 * time.Second
	)
	ctx := context.Background()
	cfg, err := env.NodeConfig(name)
	require.NoError(t, err)
	counter := &nodeRequests{counts: map[string]int{}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter }
	client, err := kubeclient.New(cfg)
	require.NoError(t, err)

	a, err := agent.New(agent.Config{
		NodeName:                  name,
		NewProvider:               built(&instantProvider{pods: map[string]*corev1.Pod{}}),
		Client:                    client,
		NodeStatusUpdateFrequency: renew,
		NodeStatusReportFrequency: reportInterval,
		NodeLeaseDurationSeconds:  1,
	})
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	go func() { _ = a.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-a.Done()
		assert.NoError(t, a.Err())
		_ = env.Admin.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.Admin.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	select {
	case <-a.Ready():
	case <-a.Done():
		t.Fatalf("agent stopped: %v", a.Err())
	case <-time.After(10 * time.Second):
		t.Fatal("agent not ready")
	}
	const (
		getNode     = "GET /api/v1/nodes/" + name
		patchStatus = "PATCH /api/v1/nodes/" + name + "/status"
		renewLease  = "PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/" + name
	)
	// Registered, and the Node watch has it: from here on the agent is at rest.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, counter.snapshot()[renewLease])
	}, 10*time.Second, 10*time.Millisecond, "lease renewed")

	before := counter.snapshot()
	time.Sleep(window) // measuring the requests of a window at rest, not waiting for a result
	after := counter.snapshot()
	delta := func(key string) int { return after[key] - before[key] }
	t.Logf("in %v at rest: %d GET node, %d PATCH status, %d lease renewals", window, delta(getNode), delta(patchStatus), delta(renewLease))

	assert.Zero(t, delta(getNode), "the Node is read from the agent's watch")
	// Reports are a period apart, the first one moved by up to half a period: 2 to 4 in the
	// window, where a write at every status update would be 12.
	assert.GreaterOrEqual(t, delta(patchStatus), 1, "the heartbeats are refreshed once a report period")
	assert.LessOrEqual(t, delta(patchStatus), int(window/reportInterval)+1)
	assert.GreaterOrEqual(t, delta(renewLease), int(window/renew)/2, "the Lease is the liveness signal")
}

package node

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeNodeProvider is a NodeProvider whose Ping result a test sets.
type fakeNodeProvider struct {
	mu       sync.Mutex
	pingErr  error
	callback func(*corev1.Node)
}

func (p *fakeNodeProvider) Ping(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pingErr
}

func (p *fakeNodeProvider) setPingErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pingErr = err
}

func (p *fakeNodeProvider) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.callback = cb
}

func (p *fakeNodeProvider) report(n *corev1.Node) {
	p.mu.Lock()
	cb := p.callback
	p.mu.Unlock()
	cb(n)
}

const (
	testStatusInterval = time.Minute
	testPingInterval   = 10 * time.Second
	testRenewInterval  = 10 * time.Second
)

// controllerHarness runs a NodeController against a fake clientset on a fake clock.
type controllerHarness struct {
	c        *NodeController
	provider *fakeNodeProvider
	client   *fake.Clientset
	clock    *clocktesting.FakeClock
}

func startController(t *testing.T, existing ...runtime.Object) *controllerHarness {
	t.Helper()
	baseline := goleak.IgnoreCurrent() // what ran before (klog, earlier tests) is not the controller's
	h := &controllerHarness{
		provider: &fakeNodeProvider{},
		client:   fake.NewClientset(existing...),
		clock:    clocktesting.NewFakeClock(statusEpoch),
	}
	// The fake tracker assigns no UIDs; the API server would.
	h.client.PrependReactor("create", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.CreateAction).GetObject().(*corev1.Node).UID = "uid-node"
		return false, nil, nil
	})
	var err error
	h.c, err = NewNodeController(h.provider, desiredTestNode(), h.client.CoreV1().Nodes(),
		WithNodeEnableLeaseV1WithRenewInterval(h.client.CoordinationV1().Leases(corev1.NamespaceNodeLease), 40, testRenewInterval),
		WithNodeStatusUpdateInterval(testStatusInterval),
		WithNodePingInterval(testPingInterval),
		WithNodeClock(h.clock),
	)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = h.c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-h.c.Done()
		assert.NoError(t, h.c.Err())
		goleak.VerifyNone(t, baseline)
	})
	select {
	case <-h.c.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("node controller not ready")
	}
	// Status, ping and lease tickers exist: from now on every Step is seen by every loop.
	require.Eventually(t, func() bool { return h.clock.Waiters() >= 3 }, 10*time.Second, time.Millisecond)
	return h
}

// actions returns the recorded actions on resource (verb, subresource) so far.
func (h *controllerHarness) actions(resource string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range h.client.Actions() {
		if a.GetResource().Resource == resource {
			out = append(out, a)
		}
	}
	return out
}

func (h *controllerHarness) count(resource, verb string) int {
	n := 0
	for _, a := range h.actions(resource) {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

func (h *controllerHarness) waitCount(t *testing.T, resource, verb string, atLeast int) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.GreaterOrEqual(c, h.count(resource, verb), atLeast, "%s %s", verb, resource)
	}, 10*time.Second, time.Millisecond, "%s %s: want at least %d", verb, resource, atLeast)
}

func (h *controllerHarness) node(t *testing.T) *corev1.Node {
	t.Helper()
	n, err := h.client.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
	require.NoError(t, err)
	return n
}

func (h *controllerHarness) lease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	l, err := h.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), "node-a", metav1.GetOptions{})
	require.NoError(t, err)
	return l
}

func TestNewNodeControllerValidates(t *testing.T) {
	client := fake.NewClientset()
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	for name, tc := range map[string]struct {
		node *corev1.Node
		opts []NodeControllerOpt
	}{
		"no name":                {node: &corev1.Node{}},
		"renew beyond duration":  {node: desiredTestNode(), opts: []NodeControllerOpt{WithNodeEnableLeaseV1WithRenewInterval(leases, 10, 10*time.Second)}},
		"negative ping interval": {node: desiredTestNode(), opts: []NodeControllerOpt{WithNodePingInterval(-time.Second)}},
		"zero status interval":   {node: desiredTestNode(), opts: []NodeControllerOpt{WithNodeStatusUpdateInterval(0)}},
		"nil lease client":       {node: desiredTestNode(), opts: []NodeControllerOpt{WithNodeEnableLeaseV1(nil, 0)}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewNodeController(&fakeNodeProvider{}, tc.node, client.CoreV1().Nodes(), tc.opts...)
			assert.Error(t, err)
		})
	}
	c, err := NewNodeController(&fakeNodeProvider{}, desiredTestNode(), client.CoreV1().Nodes(), WithNodeEnableLeaseV1(leases, 0))
	require.NoError(t, err)
	assert.Equal(t, DefaultLeaseDurationSeconds, c.leaseDurationSeconds)
	assert.Equal(t, 10*time.Second, c.leaseRenewInterval)
	assert.Equal(t, DefaultPingInterval, c.pingTimeout)
}

func TestNodeControllerRegistersNodeAndLease(t *testing.T) {
	h := startController(t)
	n := h.node(t)
	assert.Equal(t, "edge", n.Labels["tier"])
	assert.Equal(t, desiredTestNode().Spec.Taints, n.Spec.Taints)
	assert.Equal(t, "110", n.Status.Capacity.Pods().String())
	assert.Equal(t, int32(10250), n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	assert.Equal(t, "v1.36.3-vk", n.Status.NodeInfo.KubeletVersion)
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)

	h.waitCount(t, "leases", "create", 1)
	l := h.lease(t)
	assert.Equal(t, "node-a", *l.Spec.HolderIdentity)
	assert.Equal(t, int32(40), *l.Spec.LeaseDurationSeconds)
	assert.Equal(t, statusEpoch, l.Spec.RenewTime.Time.UTC())
	assert.Equal(t, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node-a", UID: n.UID}}, l.OwnerReferences)

	h.clock.Step(testRenewInterval)
	h.waitCount(t, "leases", "update", 1)
	assert.Equal(t, statusEpoch.Add(testRenewInterval), h.lease(t).Spec.RenewTime.Time.UTC())
}

func TestNodeControllerPatchesExistingNodeWithoutClobbering(t *testing.T) {
	existing := desiredTestNode()
	existing.UID = "uid-old"
	existing.Labels = map[string]string{"team": "admins", "tier": "old"}
	existing.Spec.Taints = []corev1.Taint{{Key: "admin", Effect: corev1.TaintEffectNoExecute}}
	existing.Status.Conditions = []corev1.NodeCondition{{Type: "NetworkUnavailable", Status: corev1.ConditionFalse}}
	existing.Status.Capacity = corev1.ResourceList{"example.com/dongle": resource.MustParse("2")}
	h := startController(t, existing)

	n := h.node(t)
	assert.Equal(t, map[string]string{"team": "admins", "tier": "edge", "kubernetes.io/hostname": "node-a"}, n.Labels)
	assert.Equal(t, existing.Spec.Taints, n.Spec.Taints, "taints are set at registration only")
	assert.Equal(t, corev1.ConditionFalse, condition(n, "NetworkUnavailable").Status)
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
	assert.Equal(t, "2", n.Status.Capacity.Name("example.com/dongle", resource.DecimalSI).String())
	assert.Equal(t, "110", n.Status.Capacity.Pods().String())

	patches := 0
	for _, a := range h.actions("nodes") {
		if p, ok := a.(k8stesting.PatchAction); ok {
			patches++
			assert.Equal(t, "status", p.GetSubresource())
			assert.Equal(t, "application/strategic-merge-patch+json", string(p.GetPatchType()))
		}
	}
	assert.Equal(t, 1, patches)
}

func TestNodeControllerWritesOnlyChangesAndHeartbeats(t *testing.T) {
	h := startController(t)
	gets := h.count("nodes", "get")

	// The provider reports what the node already says: read, nothing written.
	h.provider.report(&corev1.Node{Status: corev1.NodeStatus{Capacity: desiredTestNode().Status.Capacity}})
	h.waitCount(t, "nodes", "get", gets+1)
	// A real change follows; the status loop is sequential, so the patch it causes is the
	// first one after the previous read.
	h.provider.report(&corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue, Reason: "Full"},
	}}})
	h.waitCount(t, "nodes", "patch", 1)
	// The two reports may coalesce into one status pass (the channel holds one signal), so the
	// number of reads varies; the unchanged report must not have written on its own.
	assert.Equal(t, 1, h.count("nodes", "patch"), "no write for an unchanged report")
	n := h.node(t)
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeDiskPressure).Status)
	assert.Equal(t, statusEpoch, condition(n, corev1.NodeDiskPressure).LastTransitionTime.Time.UTC())

	// The interval passes: one heartbeat write, conditions' transition times untouched.
	h.clock.Step(testStatusInterval)
	h.waitCount(t, "nodes", "patch", 2)
	n = h.node(t)
	ready := condition(n, corev1.NodeReady)
	assert.Equal(t, statusEpoch.Add(testStatusInterval), ready.LastHeartbeatTime.Time.UTC())
	assert.Equal(t, statusEpoch, ready.LastTransitionTime.Time.UTC())
}

// While Ping fails the lease is not renewed, round after round; once it succeeds again the
// lease is renewed. The controller runs in a synctest bubble: after each Step, synctest.Wait
// returns once every loop has taken its tick and waits again, so each renew interval below is
// one lease round that skipped its renewal — not ticks dropped because the loop was busy.
func TestNodeControllerPingFailureStopsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startController(t)
		synctest.Wait()
		require.Equal(t, 1, h.count("leases", "create"))

		h.provider.setPingErr(errors.New("backend down"))
		h.clock.Step(testPingInterval) // also the renew interval: the renewal may race the ping
		synctest.Wait()
		ready := condition(h.node(t), corev1.NodeReady)
		require.Equal(t, corev1.ConditionFalse, ready.Status)
		assert.Equal(t, ReasonProviderFailed, ready.Reason)
		assert.Contains(t, ready.Message, "backend down")

		// Every renew interval while failing: the lease loop completes a round without a write.
		renewed := h.lease(t).Spec.RenewTime.Time
		for range 3 {
			h.clock.Step(testRenewInterval)
			synctest.Wait()
		}
		// Recovery renews: the next lease write carries a later renewTime, and none was
		// written while failing (the lease is at most one interval past the failure).
		h.provider.setPingErr(nil)
		h.clock.Step(testPingInterval)
		synctest.Wait()
		assert.Equal(t, corev1.ConditionTrue, condition(h.node(t), corev1.NodeReady).Status)
		assert.Equal(t, statusEpoch.Add(5*testPingInterval), h.lease(t).Spec.RenewTime.Time.UTC())
		assert.False(t, renewed.After(statusEpoch.Add(testRenewInterval)), "renewed at %v", renewed)
		for _, a := range h.actions("leases") {
			if a.GetVerb() != "update" {
				continue
			}
			at := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).Spec.RenewTime.Time
			failing := at.After(statusEpoch.Add(testPingInterval)) && at.Before(statusEpoch.Add(5*testPingInterval))
			assert.False(t, failing, "lease renewed at %v while the provider failed", at)
		}
	})
}

func TestNodeControllerRecreatesDeletedNode(t *testing.T) {
	h := startController(t)
	require.NoError(t, h.client.CoreV1().Nodes().Delete(context.Background(), "node-a", metav1.DeleteOptions{}))
	h.clock.Step(testStatusInterval)
	h.waitCount(t, "nodes", "create", 2)
	n := h.node(t)
	assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
	assert.Equal(t, "edge", n.Labels["tier"])
}

func TestNodeControllerErrorHandler(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	client := fake.NewClientset()
	fc := clocktesting.NewFakeClock(statusEpoch)
	boom := errors.New("patch refused")
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, boom
	})
	var handled []error
	c, err := NewNodeController(&fakeNodeProvider{}, desiredTestNode(), client.CoreV1().Nodes(),
		WithNodeClock(fc), WithNodeStatusUpdateInterval(testStatusInterval),
		WithNodeStatusUpdateErrorHandler(func(ctx context.Context, err error) error {
			handled = append(handled, err)
			return errors.New("give up")
		}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Run(ctx) }()
	<-c.Ready()
	require.Eventually(t, func() bool { return fc.Waiters() >= 2 }, 10*time.Second, time.Millisecond)
	fc.Step(testStatusInterval)
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a handler error must stop the controller")
	}
	require.ErrorContains(t, c.Err(), "give up")
	require.Len(t, handled, 1)
	assert.ErrorIs(t, handled[0], boom)
}

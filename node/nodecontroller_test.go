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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/provider/mock"
)

const (
	testStatusInterval   = time.Minute
	testReportFrequency  = 5 * time.Minute
	testPingInterval     = 10 * time.Second
	testRenewInterval    = 10 * time.Second
	testFirstWriteRetry  = 200 * time.Millisecond // writeRetry's first delay
	testNoReportJitter   = 0.5                    // statusReport.rand: no delay added to the period
	testLateReportJitter = 0.75                   // statusReport.rand: a quarter period added
	// testLateFirstReport is when the first report is due after registration, with testLateReportJitter.
	testLateFirstReport = testReportFrequency + testReportFrequency/4
)

// fakeNodeGetter is the agent's Node watch over the fake clientset: it reads the tracker, so it
// is in sync with the fake API server and sends no request (the clientset records none), unless
// the test makes it lag: then it says NotFound, as a watch that has not synced yet does, or
// holds the Node as it was when frozen, as a watch that has not delivered the latest writes.
type fakeNodeGetter struct {
	tracker k8stesting.ObjectTracker
	mu      sync.Mutex
	lagging bool
	frozen  *corev1.Node
}

func (g *fakeNodeGetter) Get(name string) (*corev1.Node, error) {
	g.mu.Lock()
	lagging, frozen := g.lagging, g.frozen
	g.mu.Unlock()
	if lagging {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	if frozen != nil {
		return frozen, nil
	}
	obj, err := g.tracker.Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", name)
	if err != nil {
		return nil, err
	}
	return obj.(*corev1.Node), nil
}

func (g *fakeNodeGetter) freeze(n *corev1.Node) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.frozen = n
}

func (g *fakeNodeGetter) setLagging(lagging bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lagging = lagging
}

// controllerHarness runs a NodeController against a fake clientset on a fake clock.
type controllerHarness struct {
	c        *NodeController
	provider *mock.NodeProvider
	client   *fake.Clientset
	clock    *clocktesting.FakeClock
	getter   *fakeNodeGetter // nil: the controller has none
}

// harnessConfig varies the controller a harness runs; the zero value is the agent's: a Lease,
// a node getter, and report periods without a random delay.
type harnessConfig struct {
	noLease  bool
	noGetter bool
	jitter   float64 // the report delay's random draw; 0 means testNoReportJitter
	existing []runtime.Object
	reactors func(*fake.Clientset) // installs reactors before the controller starts
	opts     []NodeControllerOpt   // more options
	images   *fakeImageLister      // non-nil: the provider lists these images
}

func startController(t *testing.T, existing ...runtime.Object) *controllerHarness {
	t.Helper()
	return startControllerWith(t, harnessConfig{existing: existing})
}

func startControllerWith(t *testing.T, cfg harnessConfig) *controllerHarness {
	t.Helper()
	baseline := goleak.IgnoreCurrent() // what ran before (klog, earlier tests) is not the controller's
	h := &controllerHarness{
		provider: &mock.NodeProvider{},
		client:   fake.NewClientset(cfg.existing...),
		clock:    clocktesting.NewFakeClock(statusEpoch),
	}
	// The fake tracker assigns no UIDs; the API server would.
	h.client.PrependReactor("create", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.CreateAction).GetObject().(*corev1.Node).UID = "uid-node"
		return false, nil, nil
	})
	if cfg.reactors != nil {
		cfg.reactors(h.client)
	}
	opts := []NodeControllerOpt{
		WithNodeStatusUpdateInterval(testStatusInterval),
		WithNodeStatusReportFrequency(testReportFrequency),
		WithNodePingInterval(testPingInterval),
		WithNodeClock(h.clock),
	}
	opts = append(opts, cfg.opts...)
	tickers := 2 // status and ping
	if !cfg.noLease {
		opts = append(opts, WithNodeEnableLeaseV1WithRenewInterval(h.client.CoordinationV1().Leases(corev1.NamespaceNodeLease), 40, testRenewInterval))
		tickers++
	}
	if !cfg.noGetter {
		h.getter = &fakeNodeGetter{tracker: h.client.Tracker()}
		opts = append(opts, WithNodeGetter(h.getter))
	}
	var p provider.NodeProvider = h.provider
	if cfg.images != nil {
		p = imageListingProvider{h.provider, cfg.images}
		tickers++
	}
	var err error
	h.c, err = NewNodeController(p, desiredTestNode(), h.client.CoreV1().Nodes(), opts...)
	require.NoError(t, err)
	jitter := cfg.jitter
	if jitter == 0 {
		jitter = testNoReportJitter
	}
	h.c.report.rand = func() float64 { return jitter }
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
	require.Eventually(t, func() bool { return h.clock.Waiters() >= tickers }, 10*time.Second, time.Millisecond)
	return h
}

// step advances the fake clock by d in the synctest bubble and waits until every loop has
// done what that asked of it.
func (h *controllerHarness) step(d time.Duration) {
	h.clock.Step(d)
	synctest.Wait()
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

// node reads the Node from the fake API server's store, so that the test's reads are not
// counted among the controller's requests.
func (h *controllerHarness) node(t *testing.T) *corev1.Node {
	t.Helper()
	obj, err := h.client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("nodes"), "", "node-a")
	require.NoError(t, err)
	return obj.(*corev1.Node)
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
		"zero report frequency":  {node: desiredTestNode(), opts: []NodeControllerOpt{WithNodeStatusReportFrequency(0)}},
		"nil node getter":        {node: desiredTestNode(), opts: []NodeControllerOpt{WithNodeGetter(nil)}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewNodeController(&mock.NodeProvider{}, tc.node, client.CoreV1().Nodes(), tc.opts...)
			assert.Error(t, err)
		})
	}
	c, err := NewNodeController(&mock.NodeProvider{}, desiredTestNode(), client.CoreV1().Nodes(), WithNodeEnableLeaseV1(leases, 0))
	require.NoError(t, err)
	assert.Equal(t, DefaultLeaseDurationSeconds, c.leaseDurationSeconds)
	assert.Equal(t, 10*time.Second, c.leaseRenewInterval)
	assert.Equal(t, DefaultPingInterval, c.pingTimeout)
	assert.Equal(t, DefaultStatusReportFrequency, c.report.frequency)
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

// At rest with a Lease the status is computed at every interval from the getter (no request)
// and written once a report period: the first period after registration carries the random
// delay (a quarter period here), the next ones are exact.
func TestNodeControllerAtRestWritesOncePerReportPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startControllerWith(t, harnessConfig{jitter: testLateReportJitter})
		synctest.Wait()
		require.Equal(t, 1, h.count("nodes", "create"))
		registered := statusEpoch

		intervals := int(testLateFirstReport / testStatusInterval) // 6: 6 min < 6¼ min
		for range intervals {
			h.step(testStatusInterval)
		}
		assert.Zero(t, h.count("nodes", "get"), "the getter has the Node")
		assert.Zero(t, h.count("nodes", "patch"), "nothing changed and the report period has not expired")

		h.step(testStatusInterval) // 7 min ≥ 6¼ min
		require.Equal(t, 1, h.count("nodes", "patch"))
		firstReport := registered.Add(time.Duration(intervals+1) * testStatusInterval)
		ready := condition(h.node(t), corev1.NodeReady)
		assert.Equal(t, firstReport, ready.LastHeartbeatTime.Time.UTC(), "the report refreshes the heartbeats")
		assert.Equal(t, registered, ready.LastTransitionTime.Time.UTC())

		// The next period has no delay: 5 min after the first report, not 6¼.
		for range int(testReportFrequency/testStatusInterval) - 1 {
			h.step(testStatusInterval)
		}
		assert.Equal(t, 1, h.count("nodes", "patch"))
		h.step(testStatusInterval)
		assert.Equal(t, 2, h.count("nodes", "patch"))
		assert.Equal(t, firstReport.Add(testReportFrequency), condition(h.node(t), corev1.NodeReady).LastHeartbeatTime.Time.UTC())
		assert.Zero(t, h.count("nodes", "get"))
	})
}

// A provider's report is compared with the Node the getter holds: an unchanged one writes
// nothing, a change is written at once, without a GET; the write refreshes every heartbeat.
func TestNodeControllerWritesAChangeAtOnceFromTheGetter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		report *corev1.Node
		check  func(t *testing.T, n *corev1.Node)
	}{{
		name: "condition status",
		report: &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue, Reason: "Full"},
		}}},
		check: func(t *testing.T, n *corev1.Node) {
			disk := condition(n, corev1.NodeDiskPressure)
			assert.Equal(t, corev1.ConditionTrue, disk.Status)
			assert.Equal(t, statusEpoch.Add(time.Second), disk.LastTransitionTime.Time.UTC())
			assert.Equal(t, statusEpoch, condition(n, corev1.NodeReady).LastTransitionTime.Time.UTC())
		},
	}, {
		name:   "capacity",
		report: &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("50")}}},
		check: func(t *testing.T, n *corev1.Node) {
			assert.Equal(t, "50", n.Status.Capacity.Pods().String())
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startController(t)
				synctest.Wait()

				h.provider.ReportNodeStatus(&corev1.Node{Status: corev1.NodeStatus{Capacity: desiredTestNode().Status.Capacity}})
				synctest.Wait()
				assert.Zero(t, h.count("nodes", "patch"), "no write for an unchanged report")

				h.clock.Step(time.Second)
				h.provider.ReportNodeStatus(tc.report)
				synctest.Wait()
				require.Equal(t, 1, h.count("nodes", "patch"))
				assert.Zero(t, h.count("nodes", "get"), "read from the getter")
				n := h.node(t)
				tc.check(t, n)
				assert.Equal(t, statusEpoch.Add(time.Second), condition(n, corev1.NodeReady).LastHeartbeatTime.Time.UTC())

				h.step(testStatusInterval)
				assert.Equal(t, 1, h.count("nodes", "patch"), "the next interval finds nothing to write")
			})
		})
	}
}

// The getter's watch may not have delivered the controller's own writes yet: until it has moved
// past the version they replaced, what they returned is the Node, so that a change reverted
// meanwhile is written, not taken for the state the getter still shows. (The fake API server
// keeps the resourceVersion an object was created with.)
func TestNodeControllerGetterBehindItsOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		existing := desiredTestNode()
		existing.UID, existing.ResourceVersion = "uid-old", "7"
		h := startControllerWith(t, harnessConfig{existing: []runtime.Object{existing}})
		synctest.Wait()
		require.Equal(t, 1, h.count("nodes", "patch"), "registration")
		h.getter.freeze(h.node(t))

		capacity := func(pods string) *corev1.Node {
			return &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods)}}}
		}
		for i, pods := range []string{"50", "60", "110"} { // the last one is what the getter holds
			h.provider.ReportNodeStatus(capacity(pods))
			synctest.Wait()
			require.Equal(t, 2+i, h.count("nodes", "patch"), "pods %s", pods)
			assert.Equal(t, pods, h.node(t).Status.Capacity.Pods().String())
		}
		h.provider.ReportNodeStatus(capacity("110"))
		synctest.Wait()
		assert.Equal(t, 4, h.count("nodes", "patch"), "written already")
		assert.Equal(t, 1, h.count("nodes", "get"), "registration's only: it found the Node existing")
	})
}

// A failed write is retried with the Node read from the API server: the getter's copy may be
// what made it fail. Once a write succeeds, the getter is read again.
func TestNodeControllerRetryReadsTheServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler bool // an error handler that asks for the retry at once
	}{{name: "backoff"}, {name: "error handler", handler: true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var handled []error // written by the status loop, read once it waits
				cfg := harnessConfig{reactors: func(client *fake.Clientset) {
					refused := false
					client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
						if refused {
							return false, nil, nil
						}
						refused = true
						return true, nil, apierrors.NewConflict(corev1.Resource("nodes"), "node-a", errors.New("changed meanwhile"))
					})
				}}
				if tc.handler {
					cfg.opts = append(cfg.opts, WithNodeStatusUpdateErrorHandler(func(ctx context.Context, err error) error {
						handled = append(handled, err)
						return nil
					}))
				}
				h := startControllerWith(t, cfg)
				synctest.Wait()

				h.provider.ReportNodeStatus(&corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("50")}}})
				synctest.Wait()
				if !tc.handler {
					require.Equal(t, 1, h.count("nodes", "patch"), "refused")
					assert.Zero(t, h.count("nodes", "get"))
					h.step(testFirstWriteRetry)
				}
				require.Equal(t, 2, h.count("nodes", "patch"), "retried")
				assert.Equal(t, 1, h.count("nodes", "get"), "the retry reads the server")
				assert.Equal(t, "50", h.node(t).Status.Capacity.Pods().String())
				assert.Len(t, handled, map[bool]int{true: 1}[tc.handler])

				h.provider.ReportNodeStatus(&corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("60")}}})
				synctest.Wait()
				assert.Equal(t, 3, h.count("nodes", "patch"))
				assert.Equal(t, 1, h.count("nodes", "get"), "after a success the getter is read again")
			})
		})
	}
}

// Without a Lease the conditions' heartbeats are the node's liveness: they are written at every
// interval, whatever the report frequency.
func TestNodeControllerWithoutLeaseHeartbeatsEveryInterval(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noGetter bool
	}{{name: "getter"}, {name: "no getter", noGetter: true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startControllerWith(t, harnessConfig{noLease: true, noGetter: tc.noGetter})
				synctest.Wait()
				const intervals = 3
				for i := 1; i <= intervals; i++ {
					h.step(testStatusInterval)
					require.Equal(t, i, h.count("nodes", "patch"))
					ready := condition(h.node(t), corev1.NodeReady)
					assert.Equal(t, statusEpoch.Add(time.Duration(i)*testStatusInterval), ready.LastHeartbeatTime.Time.UTC())
					assert.Equal(t, statusEpoch, ready.LastTransitionTime.Time.UTC())
				}
				wantGets := 0
				if tc.noGetter {
					wantGets = intervals // as before the getter: one GET per interval
				}
				assert.Equal(t, wantGets, h.count("nodes", "get"))
				assert.Zero(t, h.count("leases", "create"))
			})
		})
	}
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

		h.provider.SetPingError(errors.New("backend down"))
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
		h.provider.SetPingError(nil)
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

// A Node the getter does not have is looked up on the API server: while the getter lags, the
// Node it lacks is not re-created; once the server says it is gone, it is re-created once.
// While Ping fails the Lease is not renewed, so the status's heartbeats say the node is alive
// and why it is not ready: they are written at every interval, as without a Lease, and no more
// once Ping succeeds again.
func TestNodeControllerHeartbeatsWhilePingFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startController(t)
		synctest.Wait()
		h.provider.SetPingError(errors.New("backend down"))
		h.step(testPingInterval)
		require.Equal(t, 1, h.count("nodes", "patch"), "Ready False")
		for i := 1; i <= 3; i++ {
			h.step(testStatusInterval)
			require.Equal(t, 1+i, h.count("nodes", "patch"))
			ready := condition(h.node(t), corev1.NodeReady)
			assert.Equal(t, corev1.ConditionFalse, ready.Status)
			assert.Equal(t, h.clock.Now(), ready.LastHeartbeatTime.Time.UTC())
		}
		h.provider.SetPingError(nil)
		h.step(testPingInterval)
		require.Equal(t, 5, h.count("nodes", "patch"), "Ready True")
		for range 3 {
			h.step(testStatusInterval)
		}
		assert.Equal(t, 5, h.count("nodes", "patch"), "the Lease is renewed again")
	})
}

func TestNodeControllerRecreatesDeletedNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startController(t)
		synctest.Wait()
		require.Equal(t, 1, h.count("nodes", "create"))

		h.getter.setLagging(true)
		h.step(testStatusInterval)
		assert.Equal(t, 1, h.count("nodes", "get"), "the server confirms")
		assert.Equal(t, 1, h.count("nodes", "create"), "a lagging getter re-creates nothing")

		require.NoError(t, h.client.CoreV1().Nodes().Delete(context.Background(), "node-a", metav1.DeleteOptions{}))
		h.step(testStatusInterval)
		require.Equal(t, 2, h.count("nodes", "create"))
		n := h.node(t)
		assert.Equal(t, corev1.ConditionTrue, condition(n, corev1.NodeReady).Status)
		assert.Equal(t, "edge", n.Labels["tier"])

		// The getter still lags: the server has the Node, nothing is created again.
		gets := h.count("nodes", "get")
		h.step(testStatusInterval)
		assert.Equal(t, gets+1, h.count("nodes", "get"))
		h.getter.setLagging(false)
		for range 3 {
			h.step(testStatusInterval)
		}
		assert.Equal(t, 2, h.count("nodes", "create"))
		assert.Equal(t, gets+1, h.count("nodes", "get"))
		assert.Zero(t, h.count("nodes", "patch"), "a re-created Node is current")
	})
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
	c, err := NewNodeController(&mock.NodeProvider{}, desiredTestNode(), client.CoreV1().Nodes(),
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

package node

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/internal/runresult"
	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/provider"
)

// NodeController registers the Node, keeps its status current and renews its Lease.
//
// It owns the fields of the Node its caller set (and the provider reports): labels, capacity,
// allocatable, addresses, daemon endpoints, nodeInfo and its conditions by type, and, with a
// provider that is a provider.NodeImageLister, the images (listed every status update
// interval, at most WithNodeStatusMaxImages of them). It writes
// only those, as strategic-merge patches to the status subresource, and never touches labels,
// conditions or resources someone else set. Taints are set at registration only.
//
// As the kubelet does, the status is computed at every status-update interval, and at once when
// the provider reports a change or its Ping starts or stops failing, against the Node as the
// node getter holds it (WithNodeGetter: a watch's cache, so no request); it is written only when
// an owned field changed or, with a Lease (which is the liveness signal then), once every
// status report period (WithNodeStatusReportFrequency) to refresh the conditions' heartbeats.
// Without a Lease the heartbeats are the liveness signal and are written at every interval. A
// retry after a failed write reads the Node from the API server. While Ping fails, Ready is
// False and the Lease is not renewed, so the cluster sees the node go NotReady; the heartbeats
// are written at every interval then, so that it keeps seeing why (rather than Unknown, as for
// a node that stopped reporting). A deleted Node is re-created, once the API server confirms
// that it is gone.
type NodeController struct {
	provider provider.NodeProvider
	nodes    kubeclient.NodeInterface
	name     string

	leases                   kubeclient.LeaseInterface // nil: no lease
	leaseDurationSeconds     int32
	leaseRenewInterval       time.Duration
	pingInterval             time.Duration
	pingTimeout              time.Duration
	statusUpdateInterval     time.Duration
	statusUpdateErrorHandler ErrorHandler
	maxImages                int32             // status.images holds at most this many; -1: all
	nodeGetter               mirror.NodeGetter // nil: the Node is read from the API server
	clock                    clock.WithTicker

	// Only Run's goroutine (register, then the status loop) uses these two.
	report    statusReport // when an unchanged status is written again
	lastWrite nodeWrite    // what the last status write returned

	mu      sync.Mutex
	desired *corev1.Node // the caller's node plus what the provider reported
	pingErr error        // the latest Ping's result
	nodeUID types.UID    // the registered Node's UID, for the Lease's owner reference
	started bool

	statusChanged chan struct{} // capacity 1: write the status now
	pingRecovered chan struct{} // capacity 1: renew the lease now
	ready         chan struct{}
	ended         runresult.Result
}

// NewNodeController returns a controller for node, which describes the Node to register:
// name, labels, taints, capacity/allocatable (including pods), addresses, daemon endpoints and
// nodeInfo. Conditions it lacks default to Ready and no pressure. nodes is a client with the
// node's own identity; node is copied.
func NewNodeController(p provider.NodeProvider, node *corev1.Node, nodes kubeclient.NodeInterface, opts ...NodeControllerOpt) (*NodeController, error) {
	if p == nil {
		return nil, errors.New("node controller: provider is nil")
	}
	if node == nil || node.Name == "" {
		return nil, errors.New("node controller: node with a name is required")
	}
	if nodes == nil {
		return nil, errors.New("node controller: node client is nil")
	}
	desired := node.DeepCopy()
	desired.Status.Conditions = withDefaultConditions(desired.Status.Conditions)
	c := &NodeController{
		provider:             p,
		nodes:                nodes,
		name:                 node.Name,
		pingInterval:         DefaultPingInterval,
		statusUpdateInterval: DefaultStatusUpdateInterval,
		maxImages:            DefaultNodeStatusMaxImages,
		report:               statusReport{frequency: DefaultStatusReportFrequency, rand: rand.Float64},
		clock:                clock.RealClock{},
		desired:              desired,
		statusChanged:        make(chan struct{}, 1),
		pingRecovered:        make(chan struct{}, 1),
		ready:                make(chan struct{}),
	}
	for _, opt := range opts {
		if err := opt(c); err != nil {
			return nil, fmt.Errorf("node controller: %w", err)
		}
	}
	if c.pingTimeout == 0 {
		c.pingTimeout = c.pingInterval
	}
	return c, nil
}

// Ready is closed once the Node is registered.
func (c *NodeController) Ready() <-chan struct{} { return c.ready }

// Done is closed when Run has returned.
func (c *NodeController) Done() <-chan struct{} { return c.ended.Done() }

// Err is what Run returned, once Done is closed.
func (c *NodeController) Err() error { return c.ended.Err() }

// Run registers the Node (retrying until it succeeds), then pings the provider, writes the
// status and renews the Lease until ctx is cancelled. It returns after all its goroutines
// have; nil when ctx was cancelled, or the error a status-update error handler returned.
// Run may be called once.
func (c *NodeController) Run(ctx context.Context) (err error) {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("node controller: Run called twice")
	}
	c.started = true
	c.mu.Unlock()
	defer func() { c.ended.Finish(err) }()

	ctx, cancel := context.WithCancel(klog.NewContext(ctx, klog.FromContext(ctx).WithValues("node", c.name)))
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()

	c.ping(ctx)
	c.provider.NotifyNodeStatus(ctx, c.onProviderNodeStatus)
	if lister, ok := c.provider.(provider.NodeImageLister); ok {
		wg.Go(func() { c.imagesLoop(ctx, lister) })
	}
	if !c.register(ctx) {
		return nil
	}
	close(c.ready)

	wg.Go(func() { c.pingLoop(ctx) })
	if c.leases != nil {
		wg.Go(func() { c.leaseLoop(ctx) })
	}
	err = c.statusLoop(ctx)
	cancel()
	return err
}

// register creates the Node, or patches the existing one, retrying with backoff. It reports
// false when ctx ended first.
func (c *NodeController) register(ctx context.Context) bool {
	logger := klog.FromContext(ctx)
	retry := newRetryTimer(c.clock)
	for {
		err := c.ensureNode(ctx)
		if err == nil {
			logger.Info("Node registered")
			return true
		}
		after, delay := retry.after()
		logger.Error(err, "Registering the node failed; retrying", "delay", delay)
		select {
		case <-ctx.Done():
			return false
		case <-after:
		}
	}
}

// ensureNode creates the Node; if it exists, its owned fields are patched instead.
func (c *NodeController) ensureNode(ctx context.Context) error {
	err := c.createNode(ctx)
	if apierrors.IsAlreadyExists(err) {
		return c.updateStatus(ctx, true, true)
	}
	return err
}

func (c *NodeController) createNode(ctx context.Context) error {
	now := c.clock.Now()
	created, err := c.nodes.Create(ctx, nodeForCreate(c.desiredNode(), now), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create node %s: %w", c.name, err)
	}
	c.report.written(now, true)
	c.setNodeUID(created.UID)
	klog.FromContext(ctx).V(2).Info("Node created", "uid", created.UID)
	return nil
}

// desiredNode is a copy of the node the controller wants, Ready reflecting the latest Ping.
func (c *NodeController) desiredNode() *corev1.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.desired.DeepCopy()
	n.Status.Conditions = withPingResult(n.Status.Conditions, c.pingErr)
	return n
}

func (c *NodeController) setNodeUID(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodeUID = uid
}

func (c *NodeController) registeredUID() types.UID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodeUID
}

func (c *NodeController) healthy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pingErr == nil
}

// onProviderNodeStatus is the provider's NotifyNodeStatus callback; it never blocks.
func (c *NodeController) onProviderNodeStatus(reported *corev1.Node) {
	c.mu.Lock()
	mergeProviderNode(c.desired, reported)
	c.mu.Unlock()
	kick(c.statusChanged)
}

// kick signals ch without blocking; signals coalesce.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// statusLoop computes the status at every interval and on every change, and writes what
// updateStatus decides to. When no Lease is renewed (there is none, or Ping fails) the
// status's heartbeats are the node's liveness: every interval writes them.
func (c *NodeController) statusLoop(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	ticker := c.clock.NewTicker(c.statusUpdateInterval)
	defer ticker.Stop()
	retry := newRetryTimer(c.clock)
	var retryC <-chan time.Time
	heartbeatDue := false
	fromServer := false // after a failed write, the Node is read from the API server until one succeeds
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
			heartbeatDue = heartbeatDue || c.leases == nil || !c.healthy()
		case <-c.statusChanged:
		case <-retryC:
		}
		err := c.updateStatus(ctx, heartbeatDue, fromServer)
		if err != nil && ctx.Err() == nil && c.statusUpdateErrorHandler != nil {
			if herr := c.statusUpdateErrorHandler(ctx, err); herr != nil {
				return fmt.Errorf("node status update: %w", herr)
			}
			err = c.updateStatus(ctx, heartbeatDue, true)
		}
		if err == nil {
			heartbeatDue, fromServer, retryC = false, false, nil
			retry.reset()
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		fromServer = true
		var delay time.Duration
		retryC, delay = retry.after()
		logger.Error(err, "Updating the node status failed; retrying", "delay", delay)
	}
}

// updateStatus patches the owned fields of the Node that differ from what it holds, with every
// owned heartbeat when heartbeatDue is set or, with a Lease, the report period has expired.
// The Node is read from the node getter unless fromServer is set (a retry). A Node that no
// longer exists is re-created.
func (c *NodeController) updateStatus(ctx context.Context, heartbeatDue, fromServer bool) error {
	current, err := c.currentNode(ctx, fromServer)
	if apierrors.IsNotFound(err) {
		return c.recreateNode(ctx)
	}
	if err != nil {
		return err
	}
	c.setNodeUID(current.UID)
	now := c.clock.Now()
	heartbeat := heartbeatDue || (c.leases != nil && c.report.expired(now))
	updated, changed := applyOwnedFields(current, c.desiredNode(), now, heartbeat)
	if !changed && !heartbeat {
		return nil
	}
	patch, err := nodeStatusPatch(current, updated)
	if err != nil {
		return err
	}
	if string(patch) == "{}" {
		return nil // the change is below the API's timestamp resolution
	}
	patched, err := c.nodes.Patch(ctx, c.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return c.recreateNode(ctx)
	}
	if err != nil {
		return fmt.Errorf("patch node %s status: %w", c.name, err)
	}
	c.report.written(now, changed)
	from := current.ResourceVersion
	if current == c.lastWrite.node {
		from = c.lastWrite.from // the getter is still behind the previous write, and so this one
	}
	c.lastWrite = nodeWrite{from: from, node: patched}
	c.setNodeUID(patched.UID)
	klog.FromContext(ctx).V(4).Info("Node status written", "patch", string(patch))
	return nil
}

// nodeWrite is the Node a status write returned, and the resourceVersion it was computed from.
type nodeWrite struct {
	from string
	node *corev1.Node
}

// newer is what the write returned if cached is the version that write replaced, else cached.
func (w nodeWrite) newer(cached *corev1.Node) *corev1.Node {
	if w.node != nil && cached.ResourceVersion != "" && cached.ResourceVersion == w.from && cached.UID == w.node.UID {
		return w.node
	}
	return cached
}

// currentNode is the Node as the node getter holds it, as the kubelet reads its node lister —
// or what the last write returned while the getter still holds the version that write replaced
// (its watch has not delivered the write yet), so that a change reverted meanwhile is not
// missed and one already written is not written again. The API server is asked instead when
// fromServer is set, without a getter, and when the getter does not have the Node: one that
// has not synced yet must not make the controller re-create a Node that exists, so only the
// server's NotFound says the Node is gone.
func (c *NodeController) currentNode(ctx context.Context, fromServer bool) (*corev1.Node, error) {
	if c.nodeGetter != nil && !fromServer {
		if n, err := c.nodeGetter.Get(c.name); err == nil && n != nil {
			return c.lastWrite.newer(n), nil
		}
	}
	n, err := c.nodes.Get(ctx, c.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", c.name, err)
	}
	return n, nil
}

func (c *NodeController) recreateNode(ctx context.Context) error {
	klog.FromContext(ctx).Info("Node was deleted; registering it again")
	err := c.createNode(ctx)
	if apierrors.IsAlreadyExists(err) {
		// Someone re-created it meanwhile: the next update patches it.
		kick(c.statusChanged)
		return nil
	}
	return err
}

// pingLoop pings the provider at every ping interval.
func (c *NodeController) pingLoop(ctx context.Context) {
	ticker := c.clock.NewTicker(c.pingInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
			c.ping(ctx)
		}
	}
}

// ping records the provider's health; a change between healthy and failing is written to the
// status at once, and a recovery renews the lease at once.
func (c *NodeController) ping(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, c.pingTimeout)
	err := c.provider.Ping(pctx)
	cancel()
	if ctx.Err() != nil {
		return // shutting down: not the provider's fault
	}
	c.mu.Lock()
	wasHealthy := c.pingErr == nil
	c.pingErr = err
	c.mu.Unlock()
	logger := klog.FromContext(ctx)
	switch {
	case wasHealthy && err != nil:
		logger.Error(err, "Provider ping failed; the node is not ready and its lease is not renewed")
		kick(c.statusChanged)
	case !wasHealthy && err == nil:
		logger.Info("Provider ping succeeded again; the node is ready")
		kick(c.statusChanged)
		kick(c.pingRecovered)
	}
}

// retryTimer spaces out the retries of a failed write by writeRetry, on the controller's clock.
type retryTimer struct {
	clock  clock.Clock
	delays *backoff.Delays
}

func newRetryTimer(clk clock.Clock) *retryTimer {
	return &retryTimer{clock: clk, delays: writeRetry().Start()}
}

func (r *retryTimer) reset() { r.delays.Reset() }

// after returns a channel that fires after the next delay, and that delay.
func (r *retryTimer) after() (<-chan time.Time, time.Duration) {
	d := r.delays.Next()
	return r.clock.After(d), d
}

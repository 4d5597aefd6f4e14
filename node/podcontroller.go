package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/internal/runresult"
	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/sources"
)

// Defaults for PodControllerConfig.
const (
	DefaultPodSyncWorkers = 10
	// DefaultStatusWorkers: status writes are one API round trip each and cost little CPU, so
	// their throughput is workers ÷ patch latency; 32 keeps up with the API server on a
	// small machine (docs/performance.md, bottleneck 3).
	DefaultStatusWorkers      = 32
	DefaultStatusPollInterval = 5 * time.Second
	// DefaultTerminationSlack is added to a pod's grace period before the controller stops
	// waiting for the provider to report it terminated.
	DefaultTerminationSlack = 2 * time.Second
)

// SyncRetry is the back-off of a pod whose sync or status write failed: capped at 5 s (not
// client-go's 1000 s), so that after an API server outage every pod converges within seconds
// of its return.
func SyncRetry() backoff.Policy {
	return backoff.Policy{Initial: 10 * time.Millisecond, Max: 5 * time.Second}
}

// catchUpRetry is the back-off of a sync waiting for the watch to catch up (errWaitForWatch):
// it starts at about what a watch event takes to arrive on a busy API server.
func catchUpRetry() backoff.Policy {
	return backoff.Policy{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
}

// refusedRetry is the back-off of a mirror the API server refused (errMirrorRefused): from half
// a second, about what an API server takes to make its bootstrap objects after it starts
// serving, up to the resync period, at which a refusal that lasts is asked again anyway.
func refusedRetry(syncFrequency time.Duration) backoff.Policy {
	return backoff.Policy{Initial: min(500*time.Millisecond, syncFrequency), Max: syncFrequency}
}

// DesiredPods is what the controller reconciles toward: the pods the node must run (from the
// source updates, which the controller applies to it), the mirrors the API server holds for
// the static ones, and the client that writes those mirrors. It is the part of
// podmanager.Manager the sync, resync, mirror and status paths call, declared where it is used
// so that a stand-in (a test's, another store) needs to provide only this. The methods mean
// what podmanager.Manager documents; podmanager.NewBasicPodManager satisfies it.
type DesiredPods interface {
	// AddPod, UpdatePod and DeletePod keep them current from the source updates.
	AddPod(pod *corev1.Pod)
	UpdatePod(pod *corev1.Pod)
	DeletePod(pod *corev1.Pod)

	// GetPodByFullName is the desired pod of a full name, for the sync and the resync.
	GetPodByFullName(podFullName string) (*corev1.Pod, bool)
	// GetMirrorPodByPod and GetPodsAndMirrorPods are what the mirror decision reads.
	GetMirrorPodByPod(pod *corev1.Pod) (*corev1.Pod, bool)
	GetPodsAndMirrorPods() (pods, mirrorPods []*corev1.Pod)

	// GetPodByUID, IsMirrorPodOf and TranslatePodUID choose the API object the status writer
	// patches: the API pod itself, or the static pod's mirror only while it translates back to
	// that very static pod.
	GetPodByUID(uid types.UID) (*corev1.Pod, bool)
	IsMirrorPodOf(mirrorPod, pod *corev1.Pod) bool
	TranslatePodUID(uid types.UID) podmanager.ResolvedPodUID
}

// A podmanager.Manager is all the controller needs, so that an agent passes the one it built.
var _ DesiredPods = podmanager.Manager(nil)

// PodControllerConfig wires a PodController. Provider, Pods, Updates and SourceSeen are
// required; without Client the controller runs standalone (no mirrors, no status writes).
type PodControllerConfig struct {
	NodeName string
	Provider provider.PodLifecycleHandler
	// Pods holds the desired pods, which the controller keeps current from Updates (usually
	// podmanager.NewBasicPodManager): it does no I/O.
	Pods DesiredPods
	// Updates are the merger's ordered updates (sources.Mux.Updates()). A provider pod found
	// at start-up is stopped only once the update marked SourceSeen for its source has been
	// applied: before that, its absence means nothing.
	Updates <-chan sources.PodUpdate

	// Client writes status and deletes API pods, and Mirrors creates and deletes the static
	// pods' mirrors (mirror.NewBasicMirrorClient); both nil in standalone mode, both required
	// otherwise.
	Client  kubeclient.Interface
	Mirrors mirror.Client
	// Node reads this agent's Node (from an informer) for the mirror decision; required with Client.
	Node mirror.NodeGetter
	// Recorder records pod events; nil means none.
	Recorder record.EventRecorder

	Workers            int           // provider syncs in parallel; default DefaultPodSyncWorkers
	StatusWorkers      int           // status writes in parallel; default DefaultStatusWorkers
	StatusPollInterval time.Duration // for providers that do not implement provider.PodNotifier
	// SyncFrequency is how often every pod is synced again with no event asking for it (the
	// kubelet's --sync-frequency); default DefaultSyncFrequency.
	SyncFrequency time.Duration
	Clock         clock.WithTicker
	Metrics       *Metrics // nil means none
	// StatusBacklog, when set, is told of the status writes queued and in flight, for the
	// event recorder to hold events back behind them.
	StatusBacklog *StatusBacklog
}

// PodController is the pod sync loop: every pod full name is reconciled by one worker at a
// time, from three facts — the desired pod (pod manager), the pod the provider runs, and the
// mirror pod — so that no event ordering can leave them inconsistent.
type PodController struct {
	cfg    PodControllerConfig
	static bool // standalone: no API server
	known  *knownPods
	sync   workqueue.TypedRateLimitingInterface[string]
	status workqueue.TypedRateLimitingInterface[string]
	writer *statusWriter

	seenMu     sync.Mutex
	seen       map[string]bool            // sources whose first snapshot has been applied
	unreadable map[string]map[string]bool // by source: manifests that exist but do not decode

	// deleted holds, by full name, the UID of an API pod whose DELETE is sent (claimed before
	// the request, dropped if it fails): until the pod manager sees it gone, neither a sync of
	// the key (the watch echoing the terminal status) nor the status worker sends it again.
	deletedMu sync.Mutex
	deleted   map[string]types.UID

	refusals refusals // reported once per distinct answer, retried on the resync
	// catchUp is the back-off of a key whose sync waits for the watch (errWaitForWatch).
	catchUp workqueue.TypedRateLimiter[string]
	// refused is the back-off of a key whose mirror the API server refused (errMirrorRefused).
	refused workqueue.TypedRateLimiter[string]

	ready chan struct{}
	ended runresult.Result
}

// NewPodController validates cfg and returns a controller; Run starts it. The controller's work
// queues (client-go's) start goroutines as they are made, and Run stops them: a controller that
// is made must be run.
func NewPodController(cfg PodControllerConfig) (*PodController, error) {
	switch {
	case cfg.Provider == nil:
		return nil, errors.New("pod controller: Provider is required")
	case cfg.Pods == nil:
		return nil, errors.New("pod controller: Pods (pod manager) is required")
	case cfg.Updates == nil:
		return nil, errors.New("pod controller: Updates is required")
	case cfg.NodeName == "":
		return nil, errors.New("pod controller: NodeName is required")
	case cfg.Client != nil && cfg.Node == nil:
		return nil, errors.New("pod controller: Node getter is required with a Client")
	case (cfg.Client == nil) != (cfg.Mirrors == nil):
		return nil, errors.New("pod controller: Client and Mirrors go together: both for an agent with an API server, neither standalone")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultPodSyncWorkers
	}
	if cfg.StatusWorkers <= 0 {
		cfg.StatusWorkers = DefaultStatusWorkers
	}
	if cfg.SyncFrequency <= 0 {
		cfg.SyncFrequency = DefaultSyncFrequency
	}
	if cfg.StatusPollInterval <= 0 {
		cfg.StatusPollInterval = DefaultStatusPollInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Recorder == nil {
		cfg.Recorder = &record.FakeRecorder{} // discards: nil channel
	}
	queue := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(backoff.Limiter[string](SyncRetry()),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: cfg.Clock})
	}
	c := &PodController{
		cfg:     cfg,
		static:  cfg.Client == nil,
		known:   newKnownPods(),
		sync:    queue("pod-sync"),
		status:  queue("pod-status"),
		seen:    map[string]bool{},
		ready:   make(chan struct{}),
		catchUp: backoff.Limiter[string](catchUpRetry()),
		refused: backoff.Limiter[string](refusedRetry(cfg.SyncFrequency)),
	}
	if cfg.StatusBacklog != nil {
		cfg.StatusBacklog.Track(c.status.Len)
	}
	c.writer = newStatusWriter(cfg, c.known)
	cfg.Metrics.trackProviderPods(c.known.len)
	return c, nil
}

// Ready is closed once the controller has adopted the provider's pods and its workers run.
func (c *PodController) Ready() <-chan struct{} { return c.ready }

// Done is closed when Run has returned.
func (c *PodController) Done() <-chan struct{} { return c.ended.Done() }

// Err is the error Run returned, once Done is closed.
func (c *PodController) Err() error { return c.ended.Err() }

// Run adopts the pods the provider already runs, then consumes updates and syncs pods until
// ctx is cancelled. It returns after every goroutine it started has stopped.
func (c *PodController) Run(ctx context.Context) (err error) {
	defer func() { c.ended.Finish(err) }()
	logger := klog.FromContext(ctx).WithName("pod-controller")
	ctx = klog.NewContext(ctx, logger)

	// The queues' goroutines run from NewPodController on: they are shut down on every return,
	// adoption's failure included, before the workers (which stop with them) are waited for.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.sync.ShutDown()
	defer c.status.ShutDown()

	if err := c.adoptProviderPods(ctx); err != nil {
		return err
	}

	wg.Go(func() { c.consumeUpdates(ctx) })
	if n, ok := c.cfg.Provider.(provider.PodNotifier); ok {
		n.NotifyPods(ctx, func(p *corev1.Pod) { c.onProviderStatus(ctx, p) })
	} else {
		wg.Go(func() { c.pollStatus(ctx) })
	}
	for i := 0; i < c.cfg.Workers; i++ {
		wg.Go(func() { c.processQueue(ctx, "sync", c.sync, c.reconcile, c.synced, nil) })
	}
	if !c.static {
		for i := 0; i < c.cfg.StatusWorkers; i++ {
			wg.Go(func() { c.processQueue(ctx, "status", c.status, c.syncStatus, nil, c.cfg.StatusBacklog) })
		}
	}
	close(c.ready)
	logger.Info("Pod controller started", "workers", c.cfg.Workers, "standalone", c.static)
	<-ctx.Done()
	return nil
}

// adoptProviderPods records what the provider already runs (after an agent restart) so that
// nothing is created twice; whether each pod is still wanted is decided by reconcile once its
// source has been seen.
func (c *PodController) adoptProviderPods(ctx context.Context) error {
	pods, err := c.cfg.Provider.GetPods(ctx)
	if err != nil {
		return fmt.Errorf("list the provider's pods: %w", err)
	}
	for _, p := range pods {
		key := podutil.FullName(p)
		st := trackPod(p)
		st.status = ownStatus(&p.Status) // not the pod's: it would keep the whole pod
		c.known.set(key, st)
		c.sync.Add(key)
	}
	if len(pods) > 0 {
		klog.FromContext(ctx).Info("Adopted pods the provider already runs", "count", len(pods))
	}
	return nil
}

// consumeUpdates applies the merger's updates to the pod manager and queues the pods they touch.
func (c *PodController) consumeUpdates(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-c.cfg.Updates:
			if !ok {
				return
			}
			c.apply(u)
		}
	}
}

func (c *PodController) apply(u sources.PodUpdate) {
	if u.Unreadable != nil {
		c.setUnreadable(u.Source, u.Unreadable)
	}
	for _, p := range u.Pods {
		switch u.Op {
		case sources.ADD:
			c.cfg.Pods.AddPod(p)
		case sources.UPDATE, sources.DELETE, sources.RECONCILE:
			c.cfg.Pods.UpdatePod(p)
		case sources.REMOVE:
			c.cfg.Pods.DeletePod(p)
			c.writer.forget(p.UID)
		}
		key := podutil.FullName(p)
		if u.Op != sources.RECONCILE || hasReadinessGates(p) {
			c.sync.Add(key) // a status change of a pod with readiness gates may change its Ready
		}
		// A new or changed API object (a mirror appearing, a status someone else wrote) may
		// need our status written to it.
		if !c.static && u.Op != sources.REMOVE {
			c.status.Add(key)
		}
	}
	if u.SourceSeen {
		c.markSourceSeen(u.Source)
	}
	c.cfg.Metrics.observeQueue(c.sync.Len())
}

// markSourceSeen records that every pod of source is in the pod manager and queues the pods
// the provider runs, so that those the source no longer has are stopped — and, for the API
// source, every static pod and mirror, whose mirrors can now be reconciled.
func (c *PodController) markSourceSeen(source string) {
	c.seenMu.Lock()
	c.seen[source] = true
	c.seenMu.Unlock()
	c.requeueProviderPods()
	if source == podutil.APIServerSource {
		c.RequeueMirrors()
	}
}

func (c *PodController) sourceSeen(source string) bool {
	c.seenMu.Lock()
	defer c.seenMu.Unlock()
	return c.seen[source]
}

// setUnreadable records the source's manifests that exist but do not decode, and queues the
// pods the provider runs so that each is kept or stopped accordingly. The set changes rarely
// (a manifest breaks, is fixed or is removed), so queueing them all costs little.
func (c *PodController) setUnreadable(source string, locations map[string]bool) {
	c.seenMu.Lock()
	if c.unreadable == nil {
		c.unreadable = map[string]map[string]bool{}
	}
	c.unreadable[source] = locations
	c.seenMu.Unlock()
	c.requeueProviderPods()
}

// requeueProviderPods queues every pod the provider runs, for a change that may decide whether
// each is still wanted (a source seen, the set of unreadable manifests).
func (c *PodController) requeueProviderPods() {
	for _, key := range c.known.keys() {
		c.sync.Add(key)
	}
}

// manifestUnreadable reports whether the pod the provider runs came from a manifest file that
// still exists but does not decode now: its last good pod, which a restarted agent has no other
// record of.
func (c *PodController) manifestUnreadable(running *corev1.Pod) bool {
	file := running.Annotations[podutil.ConfigFileAnnotationKey]
	if file == "" {
		return false
	}
	c.seenMu.Lock()
	defer c.seenMu.Unlock()
	return c.unreadable[sourceOf(running)][file]
}

// onProviderStatus is the PodNotifier callback: it records the newest status and queues the
// status write (coalesced per pod by the queue) and, for a pod being deleted, the sync.
func (c *PodController) onProviderStatus(ctx context.Context, p *corev1.Pod) {
	key := podutil.FullName(p)
	tracked, needsSync := c.known.observe(key, p.UID, &p.Status)
	if !tracked {
		klog.FromContext(ctx).V(5).Info("Ignoring status of a pod not tracked", "podFullName", key, "uid", p.UID)
		return
	}
	if needsSync {
		c.sync.Add(key)
	}
	if !c.static {
		c.status.Add(key)
	}
}

// pollStatus asks a provider without PodNotifier for the status of every pod it runs.
func (c *PodController) pollStatus(ctx context.Context) {
	t := c.cfg.Clock.NewTicker(c.cfg.StatusPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		for _, key := range c.known.keys() {
			st, ok := c.known.get(key)
			if !ok {
				continue
			}
			status, err := c.cfg.Provider.GetPodStatus(ctx, st.meta.Namespace, st.meta.Name)
			switch {
			case provider.IsNotFound(err):
				if st.state == podDeleteSent {
					c.known.markGone(key, st.uid())
					c.sync.Add(key)
				}
			case err != nil:
				klog.FromContext(ctx).V(2).Info("Provider status poll failed", "podFullName", key, "err", err)
			default:
				p := st.ref()
				p.Status = *status
				c.onProviderStatus(ctx, p)
			}
		}
	}
}

// processQueue syncs keys from q until it shuts down; synced, when not nil, is told of every key
// that synced successfully, and backlog, when not nil, of every key taken and done.
func (c *PodController) processQueue(ctx context.Context, name string, q workqueue.TypedRateLimitingInterface[string],
	sync func(context.Context, string) error, synced func(key string), backlog *StatusBacklog) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		backlog.begin()
		start := c.cfg.Clock.Now()
		err := sync(ctx, key)
		c.cfg.Metrics.observeSync(name, c.cfg.Clock.Since(start), err)
		switch {
		case err == nil:
			q.Forget(key)
			if synced != nil {
				synced(key)
			}
		case ctx.Err() != nil:
		case errors.Is(err, errWaitForWatch):
			// The API server answered, so any back-off grown while it was unreachable no longer
			// applies: the disagreement has a back-off of its own, which starts short.
			delay := c.catchUp.When(key)
			klog.FromContext(ctx).V(2).Info("Waiting for the watch to catch up, will retry", "queue", name, "podFullName", key, "after", delay, "reason", err)
			q.Forget(key)
			q.AddAfter(key, delay)
		case errors.Is(err, errMirrorRefused):
			// Reported by syncMirror once per distinct answer; the retry is quiet.
			delay := c.refused.When(key)
			klog.FromContext(ctx).V(4).Info("Mirror pod refused, will retry", "queue", name, "podFullName", key, "after", delay)
			q.Forget(key)
			q.AddAfter(key, delay)
		default:
			klog.FromContext(ctx).Error(err, "Sync failed, will retry", "queue", name, "podFullName", key)
			q.AddRateLimited(key)
		}
		q.Done(key)
		backlog.end() // after Done: a key written again is back in the queue by then
	}
}

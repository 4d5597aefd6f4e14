package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/internal/queue"
	"github.com/vk-static/vk-static/lifecycle/health"
	"github.com/vk-static/vk-static/lifecycle/localcopy"
	"github.com/vk-static/vk-static/lifecycle/probe"
	"github.com/vk-static/vk-static/lifecycle/volume"
	"github.com/vk-static/vk-static/nodeshutdown"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// Provider is a provider.PodLifecycleHandler and provider.PodNotifier that runs pods' containers on a
// Runtime, with the logs, exec, attach, port-forward and stats capabilities. Build it with
// New, run it with Run; calls made before Run are remembered and acted on when it starts.
// Whoever builds it closes it, once (Close): Run's end does, and a Provider never run must be
// closed by its builder, as agent.New does when it fails after building it.
type Provider struct {
	cfg     Config
	rt      Runtime
	volumes *volume.Manager
	probes  *probe.Manager
	// copies keep what API pods are built from, for when the API server cannot be reached
	// ([Provider.objects]).
	copies *localcopy.Store

	mu      sync.Mutex
	pods    map[types.UID]*podState
	byName  map[string]types.UID // podutil.FullName → the UID it currently runs
	workers map[types.UID]*podWorker
	// podFiles orders each pod's record writes ([Provider.savePod]).
	podFiles map[types.UID]*podFileWrites
	notify   func(*corev1.Pod)
	// statuses are the pods' statuses built and not yet delivered to notify, newest per pod
	// ([Provider.deliverStatuses]).
	statuses *queue.Queue[types.UID, *corev1.Pod]
	// runCtx is Run's context, nil before Run: workers start with it.
	runCtx context.Context
	wg     sync.WaitGroup
	// stats keeps the previous CPU sample of each container, for usage rates.
	stats *statsSamples
	// sysctls are the sysctls pods may set ([sysctlAllowlist]).
	sysctls *sysctlAllowlist
	// kept are the pods whose records could not be read at start-up, by UID, with their
	// containers and sandboxes, which are kept until the pod is created again ([keptPod]).
	kept    map[types.UID]*keptPod
	metrics *metrics
	// probeMetrics are the kubelet's prober metrics, which the kubelet API serves on
	// /metrics/probes (ProbeMetrics).
	probeMetrics *probe.Metrics
	// health follows the runtime's health for the Node's Ready condition ([newHealthMonitor]); nil
	// for a runtime that reports none.
	health *health.Monitor
	// eviction measures the node's eviction signals for the pressure conditions ([newEvictionManager]);
	// nil without Config.Eviction.
	eviction *eviction.Manager
	// shutdown delays the host's shutdown to stop the pods gracefully ([newShutdownManager]); nil
	// without Config.Shutdown.
	shutdown *nodeshutdown.Manager
	// restarts is the crash-loop back-off of every container ([crashLoop]), imagePulls
	// the pull back-off of every pod's images ([imagePullBackoff]); a pod's keys
	// are reset when it is forgotten.
	restarts   *backoff.Keyed[containerKey]
	imagePulls *backoff.Keyed[imageKey]
	// close releases the probes and the runtime, once (Close); closed, under mu, refuses a
	// Run after it.
	close  func() error
	closed bool
}

var (
	_ provider.PodLifecycleHandler    = (*Provider)(nil)
	_ provider.PodNotifier            = (*Provider)(nil)
	_ provider.ContainerLogsHandler   = (*Provider)(nil)
	_ provider.ContainerExecHandler   = (*Provider)(nil)
	_ provider.ContainerAttachHandler = (*Provider)(nil)
	_ provider.PortForwardHandler     = (*Provider)(nil)
	_ provider.StatsSummaryHandler    = (*Provider)(nil)
	_ provider.NodeImageLister        = (*Provider)(nil)
	_ io.Closer                       = (*Provider)(nil)
)

// New builds a provider and restores the pods a previous agent left in cfg.RootDir, with the
// containers the runtime still holds for them ([Provider.restore]): those keep running.
//
// cfg.Runtime is the provider's from this call on: New closes it if it fails, the provider's
// Close otherwise; its caller never does.
func New(ctx context.Context, cfg Config) (_ *Provider, err error) {
	defer func() {
		if err != nil && cfg.Runtime != nil {
			_ = cfg.Runtime.Close() // New's error says what went wrong
		}
	}()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	sysctls, err := newSysctlAllowlist(kernelVersion(ctx), cfg.AllowedUnsafeSysctls)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: Config.AllowedUnsafeSysctls (--allowed-unsafe-sysctls): %w", err)
	}
	copies := newCopies(cfg)
	vols, err := volume.New(volume.Config{
		PodsDir:          cfg.podsDir(),
		AllowedHostPaths: cfg.AllowedHostPaths,
		HostPathFlag:     cfg.HostPathFlag,
		// Trust follows the source: static pods are the node administrator's.
		RestrictStaticPods:     cfg.RestrictStaticPods,
		RestrictStaticPodsFlag: cfg.RestrictStaticPodsFlag,
		Objects:                cfg.Objects,
		ObjectsFor:             copies.Objects,
		Tokens:                 copies.Tokens(),
		Clock:                  cfg.Clock,
		CanMount:               canMount(),
	})
	if err != nil {
		return nil, err
	}
	p := &Provider{
		cfg:      cfg,
		rt:       cfg.Runtime,
		volumes:  vols,
		copies:   copies,
		pods:     map[types.UID]*podState{},
		byName:   map[string]types.UID{},
		workers:  map[types.UID]*podWorker{},
		podFiles: map[types.UID]*podFileWrites{},
		stats:    &statsSamples{},
		statuses: queue.New[types.UID, *corev1.Pod](nil),
		sysctls:  sysctls,
		kept:     map[types.UID]*keptPod{},
		// The kubelet's numbers, with its reset after twice the longest delay for image pulls.
		restarts:   backoff.NewKeyed[containerKey](crashLoop, backoffReset, cfg.Clock),
		imagePulls: backoff.NewKeyed[imageKey](imagePullBackoff, 2*imagePullBackoff.Max, cfg.Clock),
	}
	p.metrics = newMetrics() // restore counts cleanup failures already
	p.health = newHealthMonitor(cfg, p.shutdownStatus)
	p.eviction = newEvictionManager(cfg, p)
	p.shutdown = newShutdownManager(cfg, p)
	p.probeMetrics = probe.NewMetrics()
	p.probes = probe.NewManager(cfg.Clock, p.onProbe, probe.WithEvents(p.onProbeEvent), probe.WithMetrics(p.probeMetrics))
	p.close = sync.OnceValue(func() error {
		p.probes.Close()
		// The runtime stops watching (the process runtime's supervisor connections, the CRI
		// runtime's gRPC connections); the containers keep running.
		return p.rt.Close()
	})
	if err := p.restore(ctx); err != nil {
		p.probes.Close() // the runtime is closed by the deferred call
		return nil, err
	}
	p.metrics.register(cfg.Registerer, p)
	return p, nil
}

// Close releases what the provider holds — its probes and its Runtime, closed once whatever
// the number of calls — and returns the Runtime's error, the same on every call. The
// containers keep running. Whoever built the provider closes it, once it is not running: one
// never run, or one whose Run has returned (Run does not close it: the agent's kubelet API and
// pod controller may still call it until they have stopped too). A Run after Close fails.
func (p *Provider) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.close()
}

// Run starts a worker per pod and follows the runtime's container events until ctx ends; it
// returns once every worker has stopped, leaving the provider, its Runtime open, to Close.
// Containers keep running: stopping the agent stops nothing.
func (p *Provider) Run(ctx context.Context) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return errors.New("lifecycle: Run after Close")
	}
	if w, ok := p.cfg.Services.(interface{ Run(context.Context) error }); ok {
		p.wg.Go(func() { _ = w.Run(ctx) })
	}
	p.rt.NotifyContainers(ctx, p.onContainerEvent)
	p.wg.Go(func() { p.runHealth(ctx) })
	p.wg.Go(func() { p.deliverStatuses(ctx) })
	p.mu.Lock()
	p.runCtx = ctx
	p.probeRestoredLocked(ctx)
	p.reportKeptLocked()
	for uid, st := range p.pods {
		if !st.recordPending { // CreatePod starts it once its record is on disk
			p.startWorkerLocked(uid)
		}
	}
	p.mu.Unlock()
	<-ctx.Done()
	p.wg.Wait()
	p.probes.Close()
	if p.cfg.StopPodsOnExit {
		p.stopAll(klog.NewContext(context.Background(), klog.FromContext(ctx)))
	}
	return nil
}

// stopAll stops every pod's containers with their grace periods, then its sandbox, all pods at
// once, for an agent told to take its pods down with it: a sandbox left running would outlive
// the agent (the process runtime's holder, PID 1 of a pod's namespaces). The pods stay known:
// the next agent starts them again, in new sandboxes, as after a reboot.
func (p *Provider) stopAll(ctx context.Context) {
	p.mu.Lock()
	uids := make([]types.UID, 0, len(p.pods))
	for uid := range p.pods {
		uids = append(uids, uid)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, uid := range uids {
		wg.Go(func() {
			p.stopPod(ctx, uid)
			p.mu.Lock()
			var id string
			if st, ok := p.pods[uid]; ok {
				id = st.sandboxID
			}
			p.mu.Unlock()
			if id == "" {
				return
			}
			if err := p.rt.StopSandbox(ctx, id); err != nil && !provider.IsNotFound(err) {
				klog.FromContext(ctx).Error(err, "Stopping a pod's sandbox as the agent exits", "podUID", uid, "sandboxID", id)
			}
		})
	}
	wg.Wait()
}

// NotifyPods registers cb for every status change.
func (p *Provider) NotifyPods(_ context.Context, cb func(*corev1.Pod)) {
	p.mu.Lock()
	p.notify = cb
	p.mu.Unlock()
}

// CreatePod accepts pod and starts its worker. A pod the provider already runs (restored after
// an agent restart) is kept as it is.
//
// The pod's record is written, with its syncs, after p.mu is released: the node creates pods
// from several workers, and under p.mu the syncs of one would hold back every other (and every
// status read). The pod is accepted (in p.pods) from the start, as admission counts it, but its
// worker starts only once the record is on disk, so nothing of it runs without the record: a
// crash before that leaves neither the record nor a container. A DeletePod meanwhile writes a
// newer record, which the older one does not replace (podFileWrites).
func (p *Provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	defer p.publish(pod.UID)
	p.mu.Lock()
	if _, ok := p.pods[pod.UID]; ok {
		p.mu.Unlock()
		return nil
	}
	st := &podState{
		pod:        pod.DeepCopy(),
		startTime:  p.cfg.Clock.Now(),
		containers: map[string]*containerRecord{},
		waiting:    map[string]waitingReason{},
	}
	st.resize.allocated = resources(st.pod) // the node admits the pod as it is asked
	victims, err := p.admitLocked(ctx, st.pod)
	if len(victims) > 0 && err == nil {
		// The kubelet stops them before it admits the critical pod, so that it starts on what
		// they held. CreatePod is called once at a time for a pod: nothing adds it meanwhile.
		p.mu.Unlock()
		p.preempt(ctx, pod, victims)
		p.mu.Lock()
	}
	if err != nil {
		st.refused, st.refusedReason = err.Error(), refusalReason(err)
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, st.refusedReason, st.refused)
		klog.FromContext(ctx).Info("Refused a pod", "pod", klog.KObj(pod), "reason", st.refused)
	} else if msg := limitsNotEnforced(p.rt, pod); msg != "" {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "LimitsNotEnforced", msg)
	}
	rec, err := p.encodePodLocked(st)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("lifecycle: keep pod %s: %w", klog.KObj(pod), err)
	}
	st.recordPending = true
	p.pods[pod.UID] = st
	p.byName[podutil.FullName(pod)] = pod.UID
	p.mu.Unlock()

	err = rec.write()
	p.mu.Lock()
	defer p.mu.Unlock()
	st.recordPending = false
	if p.pods[pod.UID] != st {
		return nil // forgotten meanwhile
	}
	if err != nil {
		if !st.deleting && st.evicted == "" {
			// Not accepted after all: the node calls CreatePod again.
			p.forgetLocked(pod.UID)
			return fmt.Errorf("lifecycle: keep pod %s: %w", klog.KObj(pod), err)
		}
		// Deleted or evicted meanwhile: that record was written, or its error logged.
	}
	p.adoptKeptLocked(ctx, st)
	p.startWorkerLocked(pod.UID)
	return nil
}

// UpdatePod takes an API pod's new spec and metadata. What the kubelet acts on is acted on at
// the next sync: a new activeDeadlineSeconds, a container whose image changed (restarted),
// new labels and annotations (the volumes are refreshed on that sync, refreshVolumesSoonLocked).
func (p *Provider) UpdatePod(ctx context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[pod.UID]
	if !ok {
		return provider.NotFound("lifecycle: pod %s (UID %s)", klog.KObj(pod), pod.UID)
	}
	updated := pod.DeepCopy()
	updated.Status = st.pod.Status
	// The conditions others set (readiness gates) as the API server holds them: the pod's
	// Ready depends on them (podstatus.Conditions).
	updated.Status.Conditions = pod.Status.Conditions
	st.pod = updated
	if err := p.savePod(st); err != nil {
		return fmt.Errorf("lifecycle: keep pod %s: %w", klog.KObj(pod), err)
	}
	refreshVolumesSoonLocked(st)
	p.kickLocked(pod.UID)
	return nil
}

// DeletePod stops pod within its grace period: preStop hooks, then the stop signal, then a
// kill at the deadline; main containers first, then sidecars in reverse order. The terminal
// status is reported through NotifyPods, and then the pod is forgotten.
func (p *Provider) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[pod.UID]
	if !ok {
		return provider.NotFound("lifecycle: pod %s (UID %s)", klog.KObj(pod), pod.UID)
	}
	if !st.deleting {
		st.deleting = true
		st.grace = podutil.GracePeriod(pod)
		// Recorded, so that an agent restarted before the pod is cleaned up goes on deleting
		// it rather than starting it again; failing that, the next agent is told again.
		if err := p.savePod(st); err != nil {
			klog.FromContext(ctx).Error(err, "Recording the pod's deletion", "pod", klog.KObj(pod))
		}
		p.kickLocked(pod.UID)
	}
	return nil
}

// GetPod returns the pod with its current status.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.byNameLocked(namespace, name)
	if !ok {
		return nil, provider.NotFound("lifecycle: pod %s/%s", namespace, name)
	}
	return p.podWithStatusLocked(st), nil
}

// GetPodStatus returns the pod's current status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods returns every pod the provider runs, restored ones included.
func (p *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(p.pods))
	for _, st := range p.pods {
		out = append(out, p.podWithStatusLocked(st))
	}
	return out, nil
}

func (p *Provider) byNameLocked(namespace, name string) (*podState, bool) {
	uid, ok := p.byName[podutil.BuildFullName(name, namespace)]
	if !ok {
		return nil, false
	}
	st, ok := p.pods[uid]
	return st, ok
}

func (p *Provider) podWithStatusLocked(st *podState) *corev1.Pod {
	pod := st.pod.DeepCopy()
	if st.status == nil {
		st.status = podStatus(st, p.statusInput(st))
	}
	pod.Status = *st.status.DeepCopy()
	return pod
}

// publishLocked rebuilds the pod's status and, if it changed, queues it for NotifyPods.
func (p *Provider) publishLocked(st *podState) {
	s := podStatus(st, p.statusInput(st))
	if st.status != nil && apiequality.Semantic.DeepEqual(st.status, s) {
		return
	}
	st.status = s
	pod := st.pod.DeepCopy()
	pod.Status = *s.DeepCopy()
	p.statuses.Add(pod.UID, pod)
}

// publish rebuilds and reports the status of the pod with uid, if the provider still has it.
func (p *Provider) publish(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st, ok := p.pods[uid]; ok {
		p.publishLocked(st)
	}
}

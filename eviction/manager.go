package eviction

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/nodecondition"
)

// DefaultHousekeeping is the kubelet's housekeeping interval (evictionMonitoringPeriod, 10 s).
const DefaultHousekeeping = 10 * time.Second

// Config configures a Manager. Measure is required.
type Config struct {
	// Thresholds are what ParseThresholdConfig returned; none reports no pressure ever.
	Thresholds []Threshold
	// PressureTransitionPeriod is how long a condition stays True after its last threshold
	// stopped being met; default DefaultPressureTransitionPeriod.
	PressureTransitionPeriod time.Duration
	// Housekeeping is how often the signals are measured; default DefaultHousekeeping.
	Housekeeping time.Duration
	// Measure observes the signals (Host.Measure); a signal it leaves out meets no threshold.
	Measure func(ctx context.Context) (Observations, error)
	// Clock is the time source; nil is the real clock.
	Clock clock.WithTicker

	// What eviction acts with. Without ActivePods and EvictPod no pod is evicted; without
	// the reclaim functions nothing is reclaimed at node level first.
	//
	// ActivePods are the pods that may be evicted: those not terminated.
	ActivePods func() []*corev1.Pod
	// PodStats measures the active pods as the kubelet's summary does: their working set, their
	// containers' writable layers, logs and working sets, their volumes and process count.
	PodStats func(ctx context.Context) ([]statsv1alpha1.PodStats, error)
	// EvictPod stops pod's containers with grace (1 s for a hard threshold, as the kubelet's) and leaves it
	// Failed, reason Evicted, with message; it returns once its containers have stopped.
	EvictPod func(ctx context.Context, pod *corev1.Pod, grace time.Duration, message string) error
	// ReclaimContainers removes dead containers and their logs, the kubelet's
	// DeleteAllUnusedContainers; ReclaimImages removes every image no container uses, its
	// DeleteUnusedImages.
	ReclaimContainers func(ctx context.Context) error
	ReclaimImages     func(ctx context.Context) error
	// DedicatedImageFs reports whether the imagefs is not the nodefs (the kubelet's
	// HasDedicatedImageFs); nil is false.
	DedicatedImageFs func(ctx context.Context) (bool, error)
	// MaxPodGracePeriod caps the grace period of a pod evicted for a soft threshold (the
	// kubelet's --eviction-max-pod-grace-period; 0 by default, as its).
	MaxPodGracePeriod time.Duration
	// Recorder, with NodeRef, receives the node's Warning event EvictionThresholdMet
	// ("Attempting to reclaim ephemeral-storage") before each reclaim, as the kubelet's; nil
	// records none.
	Recorder record.EventRecorder
	NodeRef  *corev1.ObjectReference
}

// Manager holds the node's signals against its thresholds. Build it with NewManager, run it
// with Run; it is safe for concurrent use.
type Manager struct {
	cfg      Config
	reporter nodecondition.Reporter

	mu                  sync.Mutex
	conditions          []corev1.NodeConditionType // under pressure now
	met                 []Threshold                // met, grace periods satisfied: what eviction acts on
	firstObservedAt     map[thresholdKey]time.Time
	conditionObservedAt map[corev1.NodeConditionType]time.Time
	observations        Observations
	dedicated           *bool // the imagefs is the nodefs's or not, once known
}

// NewManager returns a Manager of cfg; until its first housekeeping it reports no pressure.
func NewManager(cfg Config) *Manager {
	if cfg.PressureTransitionPeriod <= 0 {
		cfg.PressureTransitionPeriod = DefaultPressureTransitionPeriod
	}
	if cfg.Housekeeping <= 0 {
		cfg.Housekeeping = DefaultHousekeeping
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg}
}

// Run synchronizes at once and then every housekeeping period until ctx ends; after an
// eviction (EvictPod has waited for the pod to be stopped and cleaned up) it synchronizes
// again at once, as the kubelet does, to see what the eviction freed.
func (m *Manager) Run(ctx context.Context) error {
	return nodecondition.Every(ctx, m.cfg.Clock, m.cfg.Housekeeping, func(ctx context.Context) bool {
		return len(m.Synchronize(ctx)) > 0
	})
}

// Synchronize is one pass of the kubelet's synchronize: it measures the signals, reports the
// pressure conditions if they changed, evicts the pods above their own local storage limits
// ([Manager.evictForLocalStorage]) and, if there were none, for the thresholds met for their grace
// periods reclaims node-level resources or evicts one pod ([Manager.evict]). It returns the pods
// evicted. A failed measurement changes nothing.
func (m *Manager) Synchronize(ctx context.Context) []*corev1.Pod {
	logger := klog.FromContext(ctx)
	if len(m.cfg.Thresholds) == 0 {
		m.report(logger)
		return m.evictForLocalStorage(ctx)
	}
	observations, err := m.cfg.Measure(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to measure the node's signals")
		return nil
	}
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	thresholds := thresholdsMet(m.cfg.Thresholds, observations, false)
	if len(m.met) > 0 {
		thresholds = mergeThresholds(thresholds, thresholdsMet(m.met, observations, true))
	}
	m.firstObservedAt = thresholdsFirstObservedAt(thresholds, m.firstObservedAt, now)
	conditions := nodeConditions(thresholds)
	m.conditionObservedAt = nodeConditionsLastObservedAt(conditions, m.conditionObservedAt, now)
	m.conditions = nodeConditionsObservedSince(m.conditionObservedAt, m.cfg.PressureTransitionPeriod, now)
	m.met = thresholdsMetGracePeriod(thresholds, m.firstObservedAt, now)
	met := m.met
	updated := thresholdsUpdatedStats(met, observations, m.observations)
	m.observations = observations
	m.mu.Unlock()
	for _, t := range met {
		o := observations[t.Signal]
		logger.V(2).Info("Eviction manager: threshold met", "threshold", t.String(), "available", o.Available.String(), "capacity", o.Capacity.String())
	}
	m.report(logger)
	if evicted := m.evictForLocalStorage(ctx); len(evicted) > 0 {
		return evicted
	}
	return m.evict(ctx, updated, observations)
}

// Conditions are the node conditions under pressure now (MemoryPressure, DiskPressure,
// PIDPressure), the transition period included.
func (m *Manager) Conditions() []corev1.NodeConditionType {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.conditions)
}

// IsUnderMemoryPressure reports MemoryPressure, as the kubelet's admission asks it.
func (m *Manager) IsUnderMemoryPressure() bool {
	return hasCondition(m.Conditions(), corev1.NodeMemoryPressure)
}

// IsUnderDiskPressure reports DiskPressure.
func (m *Manager) IsUnderDiskPressure() bool {
	return hasCondition(m.Conditions(), corev1.NodeDiskPressure)
}

// IsUnderPIDPressure reports PIDPressure.
func (m *Manager) IsUnderPIDPressure() bool {
	return hasCondition(m.Conditions(), corev1.NodePIDPressure)
}

// Met are the thresholds met for their grace periods at the last housekeeping, with what was
// observed then: what eviction reclaims for.
func (m *Manager) Met() ([]Threshold, Observations) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.met), m.observations
}

// NotifyNodeStatus registers cb, which receives a Node holding the three pressure conditions
// now and whenever one changes. cb is called once before NotifyNodeStatus returns.
func (m *Manager) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	m.reporter.Register(cb)
	m.report(klog.FromContext(ctx))
}

// report passes the pressure conditions to the registered callback when one differs from the
// last passed.
func (m *Manager) report(logger klog.Logger) {
	m.reporter.Report(func() []corev1.NodeCondition {
		return pressureConditions(m.Conditions())
	}, func(_, c corev1.NodeCondition) {
		logger.Info("Node condition changed", "condition", c.Type, "status", c.Status, "reason", c.Reason)
	})
}

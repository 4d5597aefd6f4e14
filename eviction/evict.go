package eviction

import (
	"context"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// The second half of the kubelet's synchronize: with thresholds met for their grace periods,
// reclaim what the node itself can give back, and failing that evict one pod.

// immediateEvictionGracePeriod is the kubelet's grace period for a pod evicted for a hard
// threshold (immediateEvictionGracePeriodSeconds).
const immediateEvictionGracePeriod = time.Second

// reclaimFunc frees node-level resources: dead containers and their logs, unused images.
type reclaimFunc func(ctx context.Context) error

// signalReclaimFuncs are the kubelet's buildSignalToNodeReclaimFuncs (without a split
// container fs): with a dedicated imagefs, nodefs pressure has nothing to reclaim at node
// level (the kubelet deletes logs only with the pods) and imagefs pressure removes dead
// containers and unused images; without one, both remove both.
func (m *Manager) signalReclaimFuncs(dedicatedImageFs bool) map[Signal][]reclaimFunc {
	var both []reclaimFunc
	for _, f := range []reclaimFunc{m.cfg.ReclaimContainers, m.cfg.ReclaimImages} {
		if f != nil {
			both = append(both, f)
		}
	}
	out := map[Signal][]reclaimFunc{
		SignalImageFsAvailable:  both,
		SignalImageFsInodesFree: both,
		SignalNodeFsAvailable:   both,
		SignalNodeFsInodesFree:  both,
	}
	if dedicatedImageFs {
		out[SignalNodeFsAvailable], out[SignalNodeFsInodesFree] = nil, nil
	}
	return out
}

// evict acts on the thresholds met (their signals measured anew since the last housekeeping):
// it reclaims node-level resources for the first to reclaim (memory before the others) and,
// if the thresholds are not then resolved with their minimum reclaim, evicts the first pod of
// the kubelet's ranking that is not critical. It returns the pod evicted, none or one.
func (m *Manager) evict(ctx context.Context, thresholds []Threshold, observations Observations) []*corev1.Pod {
	logger := klog.FromContext(ctx)
	if len(thresholds) == 0 {
		logger.V(3).Info("Eviction manager: no resources are starved")
		return nil
	}
	dedicated, ok := m.dedicatedImageFs(ctx)
	if !ok {
		return nil
	}
	thresholds = sortByEvictionPriority(thresholds)
	threshold, res, ok := reclaimableThreshold(thresholds)
	if !ok {
		return nil
	}
	logger.Info("Eviction manager: attempting to reclaim", "resourceName", res)
	if m.cfg.Recorder != nil && m.cfg.NodeRef != nil {
		m.cfg.Recorder.Eventf(m.cfg.NodeRef, corev1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", res)
	}
	if m.reclaimNodeLevelResources(ctx, m.signalReclaimFuncs(dedicated)[threshold.Signal]) {
		logger.Info("Eviction manager: able to reduce resource pressure without evicting pods.", "resourceName", res)
		return nil
	}
	if m.cfg.ActivePods == nil || m.cfg.EvictPod == nil {
		return nil
	}
	logger.Info("Eviction manager: must evict pod(s) to reclaim", "resourceName", res)
	rank, ok := signalRankFuncs(dedicated)[threshold.Signal]
	if !ok {
		logger.Error(nil, "Eviction manager: no ranking function for signal", "threshold", threshold.Signal)
		return nil
	}
	pods := m.cfg.ActivePods()
	if len(pods) == 0 {
		logger.Error(nil, "Eviction manager: eviction thresholds have been met, but no pods are active to evict")
		return nil
	}
	stats := statsByUID(nil)
	if m.cfg.PodStats != nil {
		all, err := m.cfg.PodStats(ctx)
		if err != nil {
			logger.Error(err, "Eviction manager: failed to measure the pods")
			return nil
		}
		stats = statsByUID(all)
	}
	rank(pods, stats)
	logger.Info("Eviction manager: pods ranked for eviction", "pods", klog.KObjSlice(pods))
	for _, pod := range pods {
		grace := immediateEvictionGracePeriod
		if threshold.GracePeriod != 0 { // soft
			grace = m.cfg.MaxPodGracePeriod
			if t := pod.Spec.TerminationGracePeriodSeconds; t != nil {
				grace = min(grace, time.Duration(*t)*time.Second)
			}
		}
		if m.evictPod(ctx, pod, grace, evictionMessage(res, pod, stats, thresholds, observations)) {
			return []*corev1.Pod{pod}
		}
	}
	logger.Info("Eviction manager: unable to evict any pods from the node")
	return nil
}

// evictPod is the kubelet's: a critical pod is not evicted (false); any other is, through
// Config.EvictPod, whose failure is logged — the pod counts as evicted all the same.
func (m *Manager) evictPod(ctx context.Context, pod *corev1.Pod, grace time.Duration, message string) bool {
	logger := klog.FromContext(ctx)
	if IsCriticalPod(pod) {
		logger.Error(nil, "Eviction manager: cannot evict a critical pod", "pod", klog.KObj(pod))
		return false
	}
	logger.V(3).Info("Evicting pod", "pod", klog.KObj(pod), "podUID", pod.UID, "message", message)
	if err := m.cfg.EvictPod(ctx, pod, grace, message); err != nil {
		logger.Error(err, "Eviction manager: pod failed to evict", "pod", klog.KObj(pod))
	} else {
		logger.Info("Eviction manager: pod is evicted successfully", "pod", klog.KObj(pod))
	}
	return true
}

// dedicatedImageFs is whether the imagefs is a filesystem of its own, asked once (again after
// an error, which is logged and skips this eviction).
func (m *Manager) dedicatedImageFs(ctx context.Context) (dedicated, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dedicated != nil {
		return *m.dedicated, true
	}
	if m.cfg.DedicatedImageFs == nil {
		m.dedicated = new(bool)
		return false, true
	}
	d, err := m.cfg.DedicatedImageFs(ctx)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Eviction manager: failed to tell whether the image filesystem is the node's")
		return false, false
	}
	m.dedicated = &d
	return d, true
}

// reclaimNodeLevelResources runs funcs and measures again: true when no threshold is met any
// more, minimum reclaims included, so that no pod need be evicted.
func (m *Manager) reclaimNodeLevelResources(ctx context.Context, funcs []reclaimFunc) bool {
	if len(funcs) == 0 {
		return false
	}
	logger := klog.FromContext(ctx)
	for _, f := range funcs {
		if err := f(ctx); err != nil {
			logger.Info("Eviction manager: unexpected error when attempting to reduce resource pressure", "err", err)
		}
	}
	observations, err := m.cfg.Measure(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to measure the node's signals after resource reclaim")
		return false
	}
	return len(thresholdsMet(m.cfg.Thresholds, observations, true)) == 0
}

// sortByEvictionPriority is the kubelet's byEvictionPriority order — memory first, signals
// with no resource to reclaim last — kept stable otherwise (hard thresholds, parsed first,
// before soft ones of the same signal).
func sortByEvictionPriority(thresholds []Threshold) []Threshold {
	rank := func(t Threshold) int {
		if t.Signal == SignalMemoryAvailable {
			return 0
		}
		if _, ok := signalToResource[t.Signal]; !ok {
			return 2
		}
		return 1
	}
	out := append([]Threshold(nil), thresholds...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// reclaimableThreshold is the first threshold with a resource to reclaim.
func reclaimableThreshold(thresholds []Threshold) (Threshold, corev1.ResourceName, bool) {
	for _, t := range thresholds {
		if res, ok := signalToResource[t.Signal]; ok {
			return t, res, true
		}
	}
	return Threshold{}, "", false
}

// thresholdsUpdatedStats are the thresholds whose signal was measured anew since last: the
// kubelet evicts only on fresh measurements.
func thresholdsUpdatedStats(thresholds []Threshold, observations, last Observations) []Threshold {
	var out []Threshold
	for _, t := range thresholds {
		o, ok := observations[t.Signal]
		if !ok {
			continue
		}
		l, ok := last[t.Signal]
		if !ok || o.Time.IsZero() || o.Time.After(l.Time) {
			out = append(out, t)
		}
	}
	return out
}

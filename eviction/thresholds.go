package eviction

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's threshold arithmetic (pkg/kubelet/eviction/helpers.go), without I/O.

// thresholdsMet are the thresholds whose signal's available quantity is below them — below
// them plus their minimum reclaim with enforceMinReclaim (a threshold met before is resolved
// only once that much is reclaimed). A signal not observed meets nothing.
func thresholdsMet(thresholds []Threshold, observations Observations, enforceMinReclaim bool) []Threshold {
	var results []Threshold
	for _, t := range thresholds {
		observed, ok := observations[t.Signal]
		if !ok {
			continue
		}
		q := t.Value.quantity(observed.Capacity)
		if enforceMinReclaim && t.MinReclaim != nil {
			q.Add(*t.MinReclaim.quantity(observed.Capacity))
		}
		if q.Cmp(*observed.Available) > 0 {
			results = append(results, t)
		}
	}
	return results
}

// thresholdKey identifies a threshold across housekeepings (the kubelet keys its maps by the
// threshold itself, pointers included; a key of its parts does not depend on them).
type thresholdKey struct {
	signal Signal
	value  string
	grace  time.Duration
}

func keyOf(t Threshold) thresholdKey {
	return thresholdKey{signal: t.Signal, value: t.String(), grace: t.GracePeriod}
}

// thresholdsFirstObservedAt is when each met threshold was first met without a break.
func thresholdsFirstObservedAt(thresholds []Threshold, last map[thresholdKey]time.Time, now time.Time) map[thresholdKey]time.Time {
	results := map[thresholdKey]time.Time{}
	for _, t := range thresholds {
		at, ok := last[keyOf(t)]
		if !ok {
			at = now
		}
		results[keyOf(t)] = at
	}
	return results
}

// thresholdsMetGracePeriod are the thresholds met for at least their grace period.
func thresholdsMetGracePeriod(thresholds []Threshold, observedAt map[thresholdKey]time.Time, now time.Time) []Threshold {
	var results []Threshold
	for _, t := range thresholds {
		if at, ok := observedAt[keyOf(t)]; ok && now.Sub(at) >= t.GracePeriod {
			results = append(results, t)
		}
	}
	return results
}

// mergeThresholds is a followed by what of b it lacks.
func mergeThresholds(a, b []Threshold) []Threshold {
	out := append([]Threshold(nil), a...)
	for _, t := range b {
		found := false
		for _, o := range out {
			if keyOf(o) == keyOf(t) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, t)
		}
	}
	return out
}

// nodeConditions are the conditions the thresholds set.
func nodeConditions(thresholds []Threshold) []corev1.NodeConditionType {
	var results []corev1.NodeConditionType
	for _, t := range thresholds {
		if c, ok := signalToNodeCondition[t.Signal]; ok && !hasCondition(results, c) {
			results = append(results, c)
		}
	}
	return results
}

// nodeConditionsLastObservedAt is when each condition was last observed: now for those of
// conditions, the previous time for the others.
func nodeConditionsLastObservedAt(conditions []corev1.NodeConditionType, last map[corev1.NodeConditionType]time.Time, now time.Time) map[corev1.NodeConditionType]time.Time {
	results := map[corev1.NodeConditionType]time.Time{}
	for _, c := range conditions {
		results[c] = now
	}
	for c, at := range last {
		if _, ok := results[c]; !ok {
			results[c] = at
		}
	}
	return results
}

// nodeConditionsObservedSince are the conditions observed within period of now.
func nodeConditionsObservedSince(observedAt map[corev1.NodeConditionType]time.Time, period time.Duration, now time.Time) []corev1.NodeConditionType {
	var results []corev1.NodeConditionType
	for c, at := range observedAt {
		if now.Sub(at) < period {
			results = append(results, c)
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i] < results[j] })
	return results
}

func hasCondition(cs []corev1.NodeConditionType, c corev1.NodeConditionType) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

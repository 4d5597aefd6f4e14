package nodeshutdown

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/eviction"
)

// Group is a band of pods stopped together, with its grace period.
type Group struct {
	PriorityGracePeriod
	Pods []*corev1.Pod
}

// Groups are c's bands, lowest priority first: ByPodPriority, or the kubelet's migration of
// GracePeriod and GracePeriodCriticalPods to two bands (priority 0 with their difference,
// SystemCriticalPriority with GracePeriodCriticalPods). None when c asks for no grace period.
func Groups(c Config) []PriorityGracePeriod {
	bands := slices.Clone(c.ByPodPriority)
	if len(bands) == 0 {
		if c.GracePeriod == 0 || c.GracePeriodCriticalPods > c.GracePeriod {
			return nil
		}
		bands = []PriorityGracePeriod{
			{Priority: 0, GracePeriodSeconds: int64((c.GracePeriod - c.GracePeriodCriticalPods) / time.Second)},
			{Priority: eviction.SystemCriticalPriority, GracePeriodSeconds: int64(c.GracePeriodCriticalPods / time.Second)},
		}
	}
	slices.SortStableFunc(bands, func(a, b PriorityGracePeriod) int { return compare(a.Priority, b.Priority) })
	return bands
}

func compare(a, b int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// periodRequested is how long the shutdown must be delayed for every band, the kubelet's:
// their grace periods added up.
func periodRequested(bands []PriorityGracePeriod) time.Duration {
	var sum int64
	for _, b := range bands {
		sum += b.GracePeriodSeconds
	}
	return time.Duration(sum) * time.Second
}

// shutdownPriority is the priority pod is grouped by: its own, or at least
// SystemCriticalPriority for a critical pod (a static or mirror pod; the [nodeshutdown] package
// documentation says why).
func shutdownPriority(pod *corev1.Pod) int32 {
	var p int32
	if pod.Spec.Priority != nil {
		p = *pod.Spec.Priority
	}
	if eviction.IsCriticalPod(pod) && p < eviction.SystemCriticalPriority {
		p = eviction.SystemCriticalPriority
	}
	return p
}

// groupByPriority puts each pod in its band as the kubelet's groupByPriority: the highest
// band whose priority is not above the pod's, the lowest for a pod below every band.
func groupByPriority(bands []PriorityGracePeriod, pods []*corev1.Pod) []Group {
	groups := make([]Group, len(bands))
	for i, b := range bands {
		groups[i].PriorityGracePeriod = b
	}
	if len(groups) == 0 {
		return nil
	}
	for _, pod := range pods {
		p := shutdownPriority(pod)
		i := sort.Search(len(groups), func(i int) bool { return groups[i].Priority > p }) - 1
		if i < 0 {
			i = 0
		}
		groups[i].Pods = append(groups[i].Pods, pod)
	}
	return groups
}

// podGrace is pod's grace period in group: the group's, or the pod's own if shorter, as the
// kubelet's killPods caps it.
func podGrace(group PriorityGracePeriod, pod *corev1.Pod) time.Duration {
	s := group.GracePeriodSeconds
	if t := pod.Spec.TerminationGracePeriodSeconds; t != nil && *t <= s {
		s = *t
	}
	return time.Duration(s) * time.Second
}

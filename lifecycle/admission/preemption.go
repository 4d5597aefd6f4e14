package admission

import (
	"errors"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/podutil"
)

// Preemption's reason and messages, the kubelet's: the preempted pod's status reason and
// message, and its DisruptionTarget condition's message.
const (
	ReasonPreempting          = "Preempting"
	MessagePreempted          = "Preempted in order to admit critical pod"
	MessagePreemptedCondition = "Pod was preempted by Kubelet to accommodate a critical pod."
)

// ErrNotOnlyResources: a pod that fails a predicate other than a resource is refused, critical
// or not; preempting others would not make it fit.
var ErrNotOnlyResources = errors.New("the pod fails a predicate that preemption cannot help")

// Victims is the kubelet's critical pod admission (pkg/kubelet/preemption): the admitted pods
// that critical pod (eviction.IsCriticalPod) preempts so that it fits, when every failure of
// Check is a resource. Only pods it may preempt are chosen: not critical ones, or of a lower
// priority than its own. The set disturbs as little as it can: BestEffort pods before
// Burstable before Guaranteed ones, and within a class the fewest pods, then the smallest
// requests. An error says why no set frees enough.
func Victims(pod *corev1.Pod, admitted []*corev1.Pod, failures []Failure) ([]*corev1.Pod, error) {
	if !eviction.IsCriticalPod(pod) {
		return nil, errors.New("only a critical pod preempts others")
	}
	var need shortfalls
	for _, f := range failures {
		if f.Resource == "" {
			return nil, ErrNotOnlyResources
		}
		need = append(need, shortfall{name: f.Resource, quantity: f.shortfall()})
	}
	var bestEffort, burstable, guaranteed []*corev1.Pod
	for _, p := range admitted {
		if !preemptable(pod, p) {
			continue
		}
		switch podutil.QOSClass(p) {
		case corev1.PodQOSBestEffort:
			bestEffort = append(bestEffort, p)
		case corev1.PodQOSBurstable:
			burstable = append(burstable, p)
		case corev1.PodQOSGuaranteed:
			guaranteed = append(guaranteed, p)
		}
	}
	all := append(append(append([]*corev1.Pod(nil), bestEffort...), burstable...), guaranteed...)
	if left := need.less(all...); len(left) > 0 {
		return nil, fmt.Errorf("no set of running pods found to reclaim resources: %s", left)
	}
	// The Guaranteed pods needed if every other pod went, then the Burstable ones needed with
	// those and every BestEffort one, then the BestEffort ones needed with the rest.
	g, err := closest(guaranteed, need.less(append(append([]*corev1.Pod(nil), bestEffort...), burstable...)...))
	if err != nil {
		return nil, err
	}
	b, err := closest(burstable, need.less(append(append([]*corev1.Pod(nil), bestEffort...), g...)...))
	if err != nil {
		return nil, err
	}
	be, err := closest(bestEffort, need.less(append(append([]*corev1.Pod(nil), b...), g...)...))
	if err != nil {
		return nil, err
	}
	return append(append(be, b...), g...), nil
}

// preemptable is whether preemptor may preempt p (the kubelet's kubelettypes.Preemptable): a
// critical pod preempts one that is not, and a pod a lower priority.
func preemptable(preemptor, p *corev1.Pod) bool {
	if eviction.IsCriticalPod(preemptor) && !eviction.IsCriticalPod(p) {
		return true
	}
	return preemptor.Spec.Priority != nil && p.Spec.Priority != nil && *preemptor.Spec.Priority > *p.Spec.Priority
}

// shortfall is how much of a resource is missing.
type shortfall struct {
	name     corev1.ResourceName
	quantity int64
}

type shortfalls []shortfall

// less is what would still be missing were pods stopped.
func (s shortfalls) less(pods ...*corev1.Pod) shortfalls {
	var out shortfalls
	for _, sf := range s {
		left := sf.quantity
		for _, p := range pods {
			if left -= request(p, sf.name); left <= 0 {
				break
			}
		}
		if left > 0 {
			out = append(out, shortfall{name: sf.name, quantity: left})
		}
	}
	return out
}

// distance is how far stopping p leaves s from met, each resource weighed as the fraction of
// it p does not cover (0 when p covers all of it).
func (s shortfalls) distance(p *corev1.Pod) float64 {
	d := 0.0
	for _, sf := range s {
		if left := float64(sf.quantity - request(p, sf.name)); left > 0 {
			d += math.Pow(left/float64(sf.quantity), 2)
		}
	}
	return d
}

func (s shortfalls) String() string {
	parts := make([]string, 0, len(s))
	for _, sf := range s {
		parts = append(parts, fmt.Sprintf("%s %d", sf.name, sf.quantity))
	}
	return strings.Join(parts, ", ")
}

// closest picks from pods, one at a time, the pod that leaves need nearest met (the smaller
// requests between two as near), until need is met.
func closest(pods []*corev1.Pod, need shortfalls) ([]*corev1.Pod, error) {
	pods = append([]*corev1.Pod(nil), pods...)
	var out []*corev1.Pod
	for len(need) > 0 {
		if len(pods) == 0 {
			return nil, fmt.Errorf("no set of running pods found to reclaim resources: %s", need)
		}
		best, bestDistance := 0, float64(len(need)+1)
		for i, p := range pods {
			if d := need.distance(p); d < bestDistance || (d == bestDistance && smaller(p, pods[best])) {
				best, bestDistance = i, d
			}
		}
		need = need.less(pods[best])
		out = append(out, pods[best])
		pods[best] = pods[len(pods)-1]
		pods = pods[:len(pods)-1]
	}
	return out, nil
}

// smaller is whether a requests less than b: memory first, then cpu (equal counts as smaller).
func smaller(a, b *corev1.Pod) bool {
	for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU} {
		ra, rb := request(a, name), request(b, name)
		if ra != rb {
			return ra < rb
		}
	}
	return true
}

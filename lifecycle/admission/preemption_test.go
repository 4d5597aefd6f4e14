package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/eviction"
)

// qosPod is a pod named name of one container: requests cpu (millicores) and memory (Mi),
// and as much in limits when guaranteed.
func qosPod(name string, milliCPU, memoryMi int64, guaranteed bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{}}}}
	if milliCPU == 0 && memoryMi == 0 {
		return p
	}
	l := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memoryMi<<20, resource.BinarySI),
	}
	p.Spec.Containers[0].Resources.Requests = l
	if guaranteed {
		p.Spec.Containers[0].Resources.Limits = l.DeepCopy()
	}
	return p
}

// short is the failures of a pod short of cpu (millicores), memory (Mi) and pods.
func short(milliCPU, memoryMi, pods int64) []Failure {
	var out []Failure
	if milliCPU > 0 {
		out = append(out, Failure{Resource: corev1.ResourceCPU, Requested: milliCPU})
	}
	if memoryMi > 0 {
		out = append(out, Failure{Resource: corev1.ResourceMemory, Requested: memoryMi << 20})
	}
	if pods > 0 {
		out = append(out, Failure{Resource: corev1.ResourcePods, Requested: pods})
	}
	return out
}

// The kubelet's TestGetPodsToPreempt cases, the preemptor a node-critical pod.
func TestVictims(t *testing.T) {
	bestEffort := qosPod("bestEffort", 0, 0, false)
	burstable := qosPod("burstable", 100, 100, false)
	highRequestBurstable := qosPod("highRequestBurstable", 300, 300, false)
	guaranteed := qosPod("guaranteed", 100, 100, true)
	highRequestGuaranteed := qosPod("highRequestGuaranteed", 300, 300, true)
	clusterCritical := qosPod("clusterCritical", 100, 100, false)
	clusterCritical.Spec.Priority = ptr.To[int32](eviction.SystemCriticalPriority)
	nodeCritical := qosPod("nodeCritical", 100, 100, false)
	nodeCritical.Spec.Priority = ptr.To[int32](eviction.SystemCriticalPriority + 100)

	for _, tc := range []struct {
		name     string
		pods     []*corev1.Pod
		failures []Failure
		want     []*corev1.Pod // nil: an error
	}{
		{"no requirements", nil, nil, []*corev1.Pod{}},
		{"no pods", nil, short(0, 0, 1), nil},
		{"equal pods and resources requirements", []*corev1.Pod{burstable}, short(100, 100, 1), []*corev1.Pod{burstable}},
		{"higher requirements than pod requests", []*corev1.Pod{burstable}, short(200, 200, 2), nil},
		{"choose between bestEffort and burstable", []*corev1.Pod{burstable, bestEffort}, short(0, 0, 1), []*corev1.Pod{bestEffort}},
		{"choose between burstable and guaranteed", []*corev1.Pod{burstable, guaranteed}, short(0, 0, 1), []*corev1.Pod{burstable}},
		{"choose lower request burstable if it meets requirements", []*corev1.Pod{bestEffort, highRequestBurstable, burstable}, short(100, 100, 0), []*corev1.Pod{burstable}},
		{"choose higher request burstable if lower does not meet requirements", []*corev1.Pod{bestEffort, burstable, highRequestBurstable}, short(150, 150, 0), []*corev1.Pod{highRequestBurstable}},
		{"multiple pods required", []*corev1.Pod{bestEffort, burstable, highRequestBurstable, guaranteed, highRequestGuaranteed}, short(350, 350, 0), []*corev1.Pod{burstable, highRequestBurstable}},
		{"evict guaranteed when we have to, and dont evict the extra burstable", []*corev1.Pod{bestEffort, burstable, highRequestBurstable, guaranteed, highRequestGuaranteed}, short(0, 550, 0), []*corev1.Pod{highRequestBurstable, highRequestGuaranteed}},
		{"evict cluster critical pod for node critical pod", []*corev1.Pod{clusterCritical}, short(100, 0, 0), []*corev1.Pod{clusterCritical}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Victims(nodeCritical, tc.pods, tc.failures)
			if tc.want == nil {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, got)
		})
	}

	t.Run("can not evict node critical pod for cluster critical pod", func(t *testing.T) {
		_, err := Victims(clusterCritical, []*corev1.Pod{nodeCritical}, short(100, 0, 0))
		assert.Error(t, err)
	})
	t.Run("a static pod preempts an API pod, not another static pod", func(t *testing.T) {
		staticPod := static(qosPod("static", 100, 0, false))
		got, err := Victims(static(qosPod("new", 100, 0, false)), []*corev1.Pod{staticPod, burstable}, short(100, 0, 0))
		require.NoError(t, err)
		assert.Equal(t, []*corev1.Pod{burstable}, got)
	})
	t.Run("a pod that is not critical preempts nothing", func(t *testing.T) {
		_, err := Victims(qosPod("plain", 100, 0, false), []*corev1.Pod{bestEffort}, short(0, 0, 1))
		assert.Error(t, err)
	})
	t.Run("a failure that is not a resource is not preempted for", func(t *testing.T) {
		_, err := Victims(nodeCritical, []*corev1.Pod{burstable}, append(short(100, 0, 0), Failure{Predicate: NodeAffinity, Desc: descNodeAffinity}))
		assert.ErrorIs(t, err, ErrNotOnlyResources)
	})
}

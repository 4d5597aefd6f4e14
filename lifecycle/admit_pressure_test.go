package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/podutil"
)

// TestPressureAdmission: under memory pressure a BestEffort API pod is refused as the kubelet
// refuses it (Failed, reason Evicted, "Pod was rejected: The node had condition:
// [MemoryPressure]. "); a Burstable one, a BestEffort one tolerating the memory-pressure taint
// and a static pod are admitted.
func TestPressureAdmission(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC))
	thresholds, err := eviction.ParseThresholdConfig(map[string]string{"memory.available": "1Gi"}, nil, nil, nil)
	require.NoError(t, err)
	measure := func(context.Context) (eviction.Observations, error) {
		a, c := resource.MustParse("100Mi"), resource.MustParse("8Gi")
		return eviction.Observations{eviction.SignalMemoryAvailable: {Available: &a, Capacity: &c}}, nil
	}
	p, err := New(context.Background(), Config{Runtime: newFakeRuntime(clk), RuntimeName: "fake", RootDir: t.TempDir(), Clock: clk,
		Eviction: &eviction.Config{Thresholds: thresholds, Measure: measure}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); assert.NoError(t, p.Run(ctx)) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, p.eviction.IsUnderMemoryPressure, 10*time.Second, 5*time.Millisecond)

	pod := func(uid string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("uid-" + uid), Namespace: "default", Name: uid,
				Annotations: map[string]string{podutil.ConfigSourceAnnotationKey: "api"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Command: []string{"sleep", "60"}}}},
		}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	refusal := func(pd *corev1.Pod) string {
		require.NoError(t, p.CreatePod(context.Background(), pd))
		st, err := p.GetPodStatus(context.Background(), pd.Namespace, pd.Name)
		require.NoError(t, err)
		if st.Phase != corev1.PodFailed {
			return ""
		}
		return st.Reason + ": " + st.Message
	}
	assert.Equal(t, "Evicted: Pod was rejected: The node had condition: [MemoryPressure]. ", refusal(pod("besteffort", nil)))
	assert.Empty(t, refusal(pod("burstable", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	})))
	assert.Empty(t, refusal(pod("tolerates", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	})))
	assert.Empty(t, refusal(pod("static", func(p *corev1.Pod) { p.Annotations[podutil.ConfigSourceAnnotationKey] = "file" })))
}

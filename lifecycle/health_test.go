package lifecycle

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/lifecycle/health"
)

// healthyRuntime is the fake runtime reporting its health.
type healthyRuntime struct {
	*fakeRuntime
	mu    sync.Mutex
	ready bool
}

func (r *healthyRuntime) Status(context.Context) (*health.Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &health.Status{Conditions: []health.Condition{{Type: health.RuntimeReady, Status: r.ready}, {Type: health.NetworkReady, Status: true}}}, nil
}

// TestProviderReportsNodeConditions: the provider of a runtime that reports its health is a
// NodeProvider whose Ping never fails and whose NotifyNodeStatus gives Ready from the runtime
// and the pressure conditions from the eviction manager.
func TestProviderReportsNodeConditions(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC))
	rt := &healthyRuntime{fakeRuntime: newFakeRuntime(clk), ready: true}
	thresholds, err := eviction.ParseThresholdConfig(map[string]string{"nodefs.available": "10%"}, nil, nil, nil)
	require.NoError(t, err)
	measure := func(context.Context) (eviction.Observations, error) {
		a, c := resource.MustParse("1Gi"), resource.MustParse("100Gi")
		return eviction.Observations{eviction.SignalNodeFsAvailable: {Available: &a, Capacity: &c}}, nil
	}
	p, err := New(context.Background(), Config{Runtime: rt, RuntimeName: "fake", RootDir: t.TempDir(), Clock: clk,
		Eviction: &eviction.Config{Thresholds: thresholds, Measure: measure}})
	require.NoError(t, err)
	var mu sync.Mutex
	conds := map[corev1.NodeConditionType]string{}
	p.NotifyNodeStatus(context.Background(), func(n *corev1.Node) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range n.Status.Conditions {
			conds[c.Type] = string(c.Status) + " " + c.Reason
		}
	})
	require.NoError(t, p.Ping(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); assert.NoError(t, p.Run(ctx)) }()
	defer func() { cancel(); <-done }()
	get := func(c corev1.NodeConditionType) string { mu.Lock(); defer mu.Unlock(); return conds[c] }
	require.Eventually(t, func() bool {
		return get(corev1.NodeReady) == "True KubeletReady" && get(corev1.NodeDiskPressure) == "True KubeletHasDiskPressure"
	}, 10*time.Second, 5*time.Millisecond, "%v", conds)
	assert.Equal(t, "False KubeletHasSufficientMemory", get(corev1.NodeMemoryPressure))
	require.NoError(t, p.RuntimeHealth())

	rt.mu.Lock()
	rt.ready = false
	rt.mu.Unlock()
	require.Eventually(t, func() bool {
		clk.Step(DefaultRuntimeStatusPeriod)
		return get(corev1.NodeReady) == "False KubeletNotReady"
	}, 10*time.Second, 5*time.Millisecond, "%v", conds)
	require.ErrorContains(t, p.RuntimeHealth(), "container runtime not ready: RuntimeReady=false")
}

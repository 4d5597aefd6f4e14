package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// metricsHarness is a workerHarness whose Manager counts in metrics, registered in reg, for
// pod ns/web.
func newMetricsHarness(t *testing.T, c *corev1.Container, scripts map[string][]int) (*workerHarness, *prometheus.Registry) {
	t.Helper()
	h := newWorkerHarness(t, c, scripts)
	metrics := NewMetrics()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(metrics))
	h.m = NewManager(h.clk, nil, WithMetrics(metrics))
	h.m.spawn = func(ctx context.Context, w *worker) {
		h.workers[w.kind] = w
		h.ctxs[w.kind] = ctx
	}
	h.workers = map[Kind]*worker{}
	// Each command takes 250ms of the fake clock.
	exec := func(ctx context.Context, cmd []string) ([]byte, int, error) {
		h.clk.Step(250 * time.Millisecond)
		return h.fc.exec(ctx, cmd)
	}
	h.m.Add(t.Context(), podUID, c, instanceID, h.clk.Now(), Target{Host: "127.0.0.1", Exec: exec, PodNamespace: "ns", PodName: "web"})
	return h, reg
}

// The kubelet's /metrics/probes series, text for text: every attempt that reaches a verdict
// counts, by probe type and result — a pass successful, a failure failed, whatever the
// thresholds make of them — with the pod's name, namespace and UID; passes are timed (250ms
// each here, in the default buckets). Attempts that errored count nothing.
func TestMetricsCountProbesByResult(t *testing.T) {
	c := &corev1.Container{Name: "app",
		ReadinessProbe: probeSpec("ready", 10, 0, 1, 3),
		LivenessProbe:  probeSpec("live", 10, 0, 1, 3),
		StartupProbe:   probeSpec("missing", 10, 0, 1, 3), // no script: errors
	}
	h, reg := newMetricsHarness(t, c, map[string][]int{"ready": {0, 1, 1, 0, 0}, "live": {1}})
	// No verdict from the startup probe: liveness and readiness wait for it, and nothing counts.
	require.True(t, h.probe(Startup))
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Zero(t, n, "an errored attempt is not counted")

	// Passed for the test's sake, as a startup verdict would.
	h.m.record(h.workers[Startup], Success, "")
	for range 5 {
		require.True(t, h.probe(Readiness))
	}
	require.True(t, h.probe(Liveness), "one failure is below the threshold, and still counts")

	const want = `
# HELP prober_probe_total [BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.
# TYPE prober_probe_total counter
prober_probe_total{container="app",namespace="ns",pod="web",pod_uid="pod-1",probe_type="Liveness",result="failed"} 1
prober_probe_total{container="app",namespace="ns",pod="web",pod_uid="pod-1",probe_type="Readiness",result="failed"} 2
prober_probe_total{container="app",namespace="ns",pod="web",pod_uid="pod-1",probe_type="Readiness",result="successful"} 3
# HELP prober_probe_duration_seconds [ALPHA] Duration in seconds for a probe response.
# TYPE prober_probe_duration_seconds histogram
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.005"} 0
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.01"} 0
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.025"} 0
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.05"} 0
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.1"} 0
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.25"} 3
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="0.5"} 3
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="1"} 3
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="2.5"} 3
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="5"} 3
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="10"} 3
prober_probe_duration_seconds_bucket{container="app",namespace="ns",pod="web",probe_type="Readiness",le="+Inf"} 3
prober_probe_duration_seconds_sum{container="app",namespace="ns",pod="web",probe_type="Readiness"} 0.75
prober_probe_duration_seconds_count{container="app",namespace="ns",pod="web",probe_type="Readiness"} 3
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
}

// A pod's series end with its probing, as the kubelet's end with its workers: liveness and
// startup when the pod starts being killed, everything when it is removed; an attempt that
// finishes after that counts nothing.
func TestMetricsForgetThePod(t *testing.T) {
	c := &corev1.Container{Name: "app", ReadinessProbe: probeSpec("ready", 10, 0, 1, 3), LivenessProbe: probeSpec("live", 10, 0, 1, 3)}
	h, reg := newMetricsHarness(t, c, map[string][]int{"ready": {0}, "live": {0}})
	require.True(t, h.probe(Readiness))
	require.True(t, h.probe(Liveness))
	count := func() map[string]int {
		got := map[string]int{}
		for _, name := range []string{"prober_probe_total", "prober_probe_duration_seconds"} {
			n, err := testutil.GatherAndCount(reg, name)
			require.NoError(t, err)
			got[name] = n
		}
		return got
	}
	assert.Equal(t, map[string]int{"prober_probe_total": 2, "prober_probe_duration_seconds": 2}, count())

	liveness := h.workers[Liveness]
	h.m.StopLivenessAndStartup(podUID)
	assert.Equal(t, map[string]int{"prober_probe_total": 1, "prober_probe_duration_seconds": 1}, count(), "readiness is still probed")
	h.m.count(liveness, Success, time.Second)
	assert.Equal(t, map[string]int{"prober_probe_total": 1, "prober_probe_duration_seconds": 1}, count(), "a stopped worker counts nothing")

	readiness := h.workers[Readiness]
	h.m.RemovePod(podUID)
	assert.Equal(t, map[string]int{"prober_probe_total": 0, "prober_probe_duration_seconds": 0}, count())
	h.m.count(readiness, Success, time.Second)
	assert.Equal(t, map[string]int{"prober_probe_total": 0, "prober_probe_duration_seconds": 0}, count(), "a removed pod's worker counts nothing")
}

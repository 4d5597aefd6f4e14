package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/node/api"
)

// The kubelet API serves the provider's probe metrics on /metrics/probes.
var _ api.ProbeMetricsSource = (*Provider)(nil)

// probeCounts gathers the provider's ProbeMetrics: prober_probe_total by its labels, and the
// number of prober_probe_duration_seconds series.
func probeCounts(t require.TestingT, p *Provider) (map[string]float64, int) {
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(p.ProbeMetrics()))
	families, err := reg.Gather()
	require.NoError(t, err)
	counts, durations := map[string]float64{}, 0
	for _, f := range families {
		switch f.GetName() {
		case "prober_probe_total":
			for _, m := range f.GetMetric() {
				counts[labelString(m)] = m.GetCounter().GetValue()
			}
		case "prober_probe_duration_seconds":
			durations = len(f.GetMetric())
		}
	}
	return counts, durations
}

func labelString(m *dto.Metric) string {
	s := ""
	for _, l := range m.GetLabel() {
		s += l.GetName() + "=" + l.GetValue() + " "
	}
	return s
}

// The pods' probes are counted in the provider's ProbeMetrics with the pod's name, namespace
// and UID, as the kubelet's prober_probe_total: a readiness probe failing, then passing. Once
// the pod is stopped its series are gone.
func TestProbeMetricsCountThePodsProbes(t *testing.T) {
	h := newHarness(t)
	h.rt.execExit = map[string]int{"ready?": 1}
	c := ctr("app", "serve")
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"ready?"}}}, PeriodSeconds: 1}
	pod := testPod("pm1", corev1.RestartPolicyAlways, c)
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	const labels = "container=app namespace=default pod=p-pm1 pod_uid=pm1 probe_type=Readiness "
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		h.clock.Step(time.Second) // past the start-up jitter, then each period
		counts, _ := probeCounts(c, h.p)
		assert.Positive(c, counts[labels+"result=failed "], "%v", counts)
	}, 10*time.Second, 20*time.Millisecond, "the failing probe counted")
	h.rt.mu.Lock()
	h.rt.execExit = nil
	h.rt.mu.Unlock()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		h.clock.Step(time.Second)
		counts, durations := probeCounts(c, h.p)
		assert.Positive(c, counts[labels+"result=successful "], "%v", counts)
		assert.Equal(c, 1, durations, "the passes timed")
	}, 10*time.Second, 20*time.Millisecond, "the passing probe counted")

	h.deleteUntilStopped(pod)
	counts, durations := probeCounts(t, h.p)
	assert.Empty(t, counts, "a stopped pod's series")
	assert.Zero(t, durations)
}

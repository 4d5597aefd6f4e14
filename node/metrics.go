package node

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podmanager"
)

// Metrics are the agent's Prometheus metrics. A nil *Metrics records nothing, so library users
// who do not want metrics pass none.
type Metrics struct {
	syncDuration     *prometheus.HistogramVec
	syncErrors       *prometheus.CounterVec
	queueDepth       prometheus.Gauge
	providerDuration *prometheus.HistogramVec
	providerErrors   *prometheus.CounterVec
	mirrorOps        *prometheus.CounterVec
	rejected         *prometheus.CounterVec
	eventsDropped    prometheus.Counter
	providerPods     atomic.Pointer[func() int] // set by the PodController that uses these metrics
}

// NewMetrics registers the metrics with reg. pods, when not nil, is read at scrape time for the
// pods-by-source-and-phase gauge, so that no hot path maintains counts.
func NewMetrics(reg prometheus.Registerer, pods PodLister) *Metrics {
	m := &Metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vk_static_pod_sync_duration_seconds", Help: "Time to sync one pod, by queue (sync, status).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"queue"}),
		syncErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vk_static_pod_sync_errors_total", Help: "Pod syncs that failed and were retried, by queue.",
		}, []string{"queue"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vk_static_pod_sync_queue_depth", Help: "Pods waiting to be synced.",
		}),
		providerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vk_static_provider_call_duration_seconds", Help: "Provider call latency, by call.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"call"}),
		providerErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vk_static_provider_call_errors_total", Help: "Provider calls that failed, by call.",
		}, []string{"call"}),
		mirrorOps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vk_static_mirror_pod_operations_total", Help: "Mirror pod creates and deletes, by result.",
		}, []string{"op", "result"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vk_static_rejected_manifests_total", Help: "Manifests rejected, by source.",
		}, []string{"source"}),
		eventsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vk_static_events_dropped_total", Help: "Events not recorded because the event queue was full.",
		}),
	}
	providerPods := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vk_static_provider_pods", Help: "Pods the provider runs (including terminating ones), as the pod controller tracks them.",
	}, func() float64 {
		if f := m.providerPods.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	reg.MustRegister(m.syncDuration, m.syncErrors, m.queueDepth, m.providerDuration, m.providerErrors, m.mirrorOps, m.rejected, m.eventsDropped, providerPods)
	if pods != nil {
		reg.MustRegister(&podsCollector{pods: pods, desc: prometheus.NewDesc("vk_static_pods",
			"Pods the agent manages, by source and phase (as last written).", []string{"source", "phase"}, nil)})
	}
	return m
}

func (m *Metrics) trackProviderPods(count func() int) {
	if m != nil {
		m.providerPods.Store(&count)
	}
}

func (m *Metrics) observeQueue(depth int) {
	if m != nil {
		m.queueDepth.Set(float64(depth))
	}
}

func (m *Metrics) observeSync(queue string, d time.Duration, err error) {
	if m == nil {
		return
	}
	m.syncDuration.WithLabelValues(queue).Observe(d.Seconds())
	if err != nil {
		m.syncErrors.WithLabelValues(queue).Inc()
	}
}

func (m *Metrics) timeProvider(call string, f func() error) error {
	if m == nil {
		return f()
	}
	start := time.Now()
	err := f()
	m.providerDuration.WithLabelValues(call).Observe(time.Since(start).Seconds())
	if err != nil {
		m.providerErrors.WithLabelValues(call).Inc()
	}
	return err
}

func (m *Metrics) mirrorOp(op string, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.mirrorOps.WithLabelValues(op, result).Inc()
}

func (m *Metrics) eventDropped() {
	if m != nil {
		m.eventsDropped.Inc()
	}
}

func (m *Metrics) rejectedManifest(source string) {
	if m != nil {
		m.rejected.WithLabelValues(source).Inc()
	}
}

// PodLister is what Metrics reads at scrape time for the pods-by-source-and-phase gauge: the
// regular pods, as podmanager.Manager's GetPods returns them.
type PodLister interface {
	GetPods() []*corev1.Pod
}

// A podmanager.Manager is also what Metrics reads, so that an agent passes the one it built.
var _ PodLister = podmanager.Manager(nil)

// podsCollector counts pods by source and phase at scrape time.
type podsCollector struct {
	pods PodLister
	desc *prometheus.Desc
}

func (c *podsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *podsCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct{ source, phase string }
	counts := map[key]int{}
	for _, p := range c.pods.GetPods() {
		phase := string(p.Status.Phase)
		if phase == "" {
			phase = string(corev1.PodPending)
		}
		counts[key{sourceOf(p), phase}]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), k.source, k.phase)
	}
}

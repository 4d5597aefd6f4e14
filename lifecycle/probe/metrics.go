package probe

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
)

// Metrics are the kubelet's prober metrics (pkg/kubelet/prober/prober_manager.go, v1.36), with
// its names, types, help texts (the stability level in brackets, as its registry prints them)
// and labels, which it serves on /metrics/probes:
//
//   - prober_probe_total, a counter by probe_type (Liveness, Readiness, Startup), result
//     (successful, failed; unknown is defined but the kubelet's prober never gives it), container,
//     pod, namespace and pod_uid: one count per probe attempt that reached a verdict — a pass
//     (a warning too) successful, a failure failed; an attempt that errored (no verdict) is not
//     counted, as the kubelet throws those results away;
//   - prober_probe_duration_seconds, a histogram (the default buckets) by probe_type, container,
//     pod and namespace: how long each successful attempt took, retries of errors included.
//
// A pod's series go when the Manager stops probing it (RemovePod), and its liveness and startup
// series with StopLivenessAndStartup, as the kubelet's end with its probe workers. Unlike the
// kubelet's, which keep a worker per container across restarts, a container's series are kept
// across its instances until then.
//
// Metrics is a prometheus.Collector: register it where the kubelet API serves /metrics/probes.
// Its methods are safe for concurrent use.
type Metrics struct {
	results  *prometheus.CounterVec
	duration *prometheus.HistogramVec

	mu sync.Mutex
	// pods are the pods with series, by UID: the duration histogram has no pod_uid label, so
	// deleting a pod's series needs its name.
	pods map[types.UID]podName
}

type podName struct{ namespace, name string }

// The kubelet's values of the result label.
const (
	resultSuccessful = "successful"
	resultFailed     = "failed"
)

// NewMetrics returns the prober metrics, with no series yet.
func NewMetrics() *Metrics {
	return &Metrics{
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "prober_probe_total",
			Help: "[BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.",
		}, []string{"probe_type", "result", "container", "pod", "namespace", "pod_uid"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "prober_probe_duration_seconds",
			Help: "[ALPHA] Duration in seconds for a probe response.",
		}, []string{"probe_type", "container", "pod", "namespace"}),
		pods: map[types.UID]podName{},
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.results.Describe(ch)
	m.duration.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.results.Collect(ch)
	m.duration.Collect(ch)
}

// observe counts one attempt of kind k on container of the pod that reached verdict r, which
// took d.
func (m *Metrics) observe(k Kind, uid types.UID, pod podName, container string, r Result, d time.Duration) {
	m.mu.Lock()
	m.pods[uid] = pod
	m.mu.Unlock()
	result := resultFailed
	if r == Success {
		result = resultSuccessful
	}
	m.results.WithLabelValues(k.String(), result, container, pod.name, pod.namespace, string(uid)).Inc()
	if r == Success {
		m.duration.WithLabelValues(k.String(), container, pod.name, pod.namespace).Observe(d.Seconds())
	}
}

// forget deletes the pod's series of the given kinds, or of every kind when none is given.
func (m *Metrics) forget(uid types.UID, kinds ...Kind) {
	m.mu.Lock()
	pod, ok := m.pods[uid]
	if ok && len(kinds) == 0 {
		delete(m.pods, uid)
	}
	m.mu.Unlock()
	if !ok {
		return
	}
	if len(kinds) == 0 {
		m.results.DeletePartialMatch(prometheus.Labels{"pod_uid": string(uid)})
		m.duration.DeletePartialMatch(prometheus.Labels{"namespace": pod.namespace, "pod": pod.name})
		return
	}
	for _, k := range kinds {
		m.results.DeletePartialMatch(prometheus.Labels{"pod_uid": string(uid), "probe_type": k.String()})
		m.duration.DeletePartialMatch(prometheus.Labels{"namespace": pod.namespace, "pod": pod.name, "probe_type": k.String()})
	}
}

// WithMetrics makes the Manager count its probes' results and time them in m.
func WithMetrics(m *Metrics) Option {
	return func(mgr *Manager) { mgr.metrics = m }
}

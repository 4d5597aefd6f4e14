package lifecycle

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the lifecycle's Prometheus metrics, registered with Config.Registerer (nowhere
// without one). They report what the lifecycle keeps rather than lose: pods whose cleanup
// failed and is retried, and pod records that could not be read (their containers are kept).
type metrics struct {
	cleanupFailures *prometheus.CounterVec
}

// Cleanup steps, the "step" label of vk_static_pod_cleanup_failures_total.
const (
	cleanupStepContainer = "container"
	cleanupStepSandbox   = "sandbox"
	cleanupStepVolumes   = "volumes"
	cleanupStepDirectory = "directory"
)

// newMetrics registers the lifecycle's metrics with reg (none when nil); the gauges are read
// from p at scrape time, so that no hot path maintains counts.
func newMetrics(reg prometheus.Registerer, p *Provider) *metrics {
	m := &metrics{
		cleanupFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vk_static_pod_cleanup_failures_total",
			Help: "Attempts to remove a stopped pod's containers, sandbox, volumes or directory that failed (the pod is kept and tried again), by step.",
		}, []string{"step"}),
	}
	if reg == nil {
		return m
	}
	notCleanedUp := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vk_static_pods_not_cleaned_up",
		Help: "Stopped pods whose containers, sandbox, volumes or directory could not all be removed yet, kept and tried again with back-off.",
	}, func() float64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for _, st := range p.pods {
			if st.cleanup != nil {
				n++
			}
		}
		return float64(n)
	})
	unreadable := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vk_static_unreadable_pod_records",
		Help: "Pod records (RootDir/pods/<uid>/pod.json) that could not be read at start-up and whose containers are kept, untouched, until the pod is created again.",
	}, func() float64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return float64(len(p.kept))
	})
	reg.MustRegister(m.cleanupFailures, notCleanedUp, unreadable)
	return m
}

func (m *metrics) cleanupFailed(step string) {
	m.cleanupFailures.WithLabelValues(step).Inc()
}

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

func newMetrics() *metrics {
	return &metrics{
		cleanupFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vk_static_pod_cleanup_failures_total",
			Help: "Attempts to remove a stopped pod's containers, sandbox, volumes or directory that failed (the pod is kept and tried again), by step.",
		}, []string{"step"}),
	}
}

// register registers m with reg (nowhere when nil), once New can no longer fail: a failed New
// that had registered them would leave a provider that does not exist answering scrapes, and
// make the next New on the same registry fail with duplicate metrics. The gauges are read
// from p at scrape time, so that no hot path maintains counts.
func (m *metrics) register(reg prometheus.Registerer, p *Provider) {
	if reg == nil {
		return
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
}

func (m *metrics) cleanupFailed(step string) {
	m.cleanupFailures.WithLabelValues(step).Inc()
}

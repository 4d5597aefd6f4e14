package api

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/provider"
)

// The kubelet's /metrics/resource series (pkg/kubelet/metrics/collectors/resource_metrics.go),
// with its names, help, labels and timestamps: metrics-server scrapes them by name. Swap
// series are left out, as a StatsSummaryHandler reports no swap.
var (
	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// resourceMetrics serves /metrics/resource: the provider's Summary as the kubelet's resource
// metrics. A provider without StatsSummaryHandler is 501; one whose Summary fails answers
// scrape_error 1 and nothing else, as the kubelet does.
func (rt Routes) resourceMetrics(w http.ResponseWriter, r *http.Request) {
	stats, ok := capability[provider.StatsSummaryHandler](w, rt.Provider)
	if !ok {
		return
	}
	summary, err := stats.GetStatsSummary(r.Context())
	if err != nil {
		klog.FromContext(r.Context()).Error(err, "Getting the stats summary for /metrics/resource")
		summary = nil
	}
	// A registry per scrape: the collector holds this scrape's summary.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(summaryCollector{summary})
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).ServeHTTP(w, r)
}

// summaryCollector turns one Summary (nil: it could not be had) into the resource metrics.
type summaryCollector struct{ s *statsv1alpha1.Summary }

func (summaryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUUsageDesc, nodeMemoryUsageDesc, containerCPUUsageDesc,
		containerMemoryUsageDesc, containerStartTimeDesc, podCPUUsageDesc, podMemoryUsageDesc,
		scrapeErrorDesc, resourceScrapeErrorDesc} {
		ch <- d
	}
}

func (c summaryCollector) Collect(ch chan<- prometheus.Metric) {
	failed := 0.0
	if c.s == nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
	ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed)
	if c.s == nil {
		return
	}
	collectCPU(ch, nodeCPUUsageDesc, c.s.Node.CPU)
	collectMemory(ch, nodeMemoryUsageDesc, c.s.Node.Memory)
	for _, p := range c.s.Pods {
		pod, ns := p.PodRef.Name, p.PodRef.Namespace
		for _, ct := range p.Containers {
			// The kubelet gives the start time no timestamp of its own.
			if !ct.StartTime.IsZero() {
				ch <- prometheus.MustNewConstMetric(containerStartTimeDesc, prometheus.GaugeValue,
					float64(ct.StartTime.UnixNano())/float64(time.Second), ct.Name, pod, ns)
			}
			collectCPU(ch, containerCPUUsageDesc, ct.CPU, ct.Name, pod, ns)
			collectMemory(ch, containerMemoryUsageDesc, ct.Memory, ct.Name, pod, ns)
		}
		collectCPU(ch, podCPUUsageDesc, p.CPU, pod, ns)
		collectMemory(ch, podMemoryUsageDesc, p.Memory, pod, ns)
	}
}

// collectCPU sends cumulative CPU time in core-seconds, timed by the sample; nothing when the
// sample lacks it, as the kubelet.
func collectCPU(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsv1alpha1.CPUStats, labels ...string) {
	if s == nil || s.UsageCoreNanoSeconds == nil {
		return
	}
	ch <- timed(s.Time, prometheus.MustNewConstMetric(d, prometheus.CounterValue,
		float64(*s.UsageCoreNanoSeconds)/float64(time.Second), labels...))
}

// collectMemory sends the working set in bytes, timed by the sample.
func collectMemory(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsv1alpha1.MemoryStats, labels ...string) {
	if s == nil || s.WorkingSetBytes == nil {
		return
	}
	ch <- timed(s.Time, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*s.WorkingSetBytes), labels...))
}

// timed stamps m with the sample's time, which metrics-server uses to compute rates.
func timed(at metav1.Time, m prometheus.Metric) prometheus.Metric {
	if at.IsZero() {
		return m
	}
	return prometheus.NewMetricWithTimestamp(at.Time, m)
}

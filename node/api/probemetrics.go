package api

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
)

// ProbeMetricsSource is implemented by a provider that probes its containers (package
// lifecycle's Provider): /metrics/probes serves its collector, which holds the kubelet's
// prober_probe_total and prober_probe_duration_seconds (package lifecycle/probe's Metrics). It
// is not one of package provider's capabilities, which link no Prometheus: a provider without
// it (the mock, which runs no probes) serves no probe series, and no error.
type ProbeMetricsSource interface {
	ProbeMetrics() prometheus.Collector
}

// processStartDesc is the gauge the kubelet registers beside its prober metrics
// (component-base's RegisterProcessStartTime), "to ensure counter data fidelity".
var processStartDesc = prometheus.NewDesc("process_start_time_seconds",
	"[ALPHA] Start time of the process since unix epoch in seconds.", nil, nil)

// probeMetrics serves /metrics/probes, as the kubelet's registry there: the provider's probe
// metrics (none without ProbeMetricsSource) and process_start_time_seconds, the agent's start
// (started).
func (rt Routes) probeMetrics(started float64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(constCollector{prometheus.MustNewConstMetric(processStartDesc, prometheus.GaugeValue, started)})
		if src, ok := rt.Provider.(ProbeMetricsSource); ok {
			if c := src.ProbeMetrics(); c != nil {
				if err := reg.Register(c); err != nil {
					klog.FromContext(r.Context()).Error(err, "Registering the provider's probe metrics for /metrics/probes")
				}
			}
		}
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
	}
}

// constCollector collects fixed metrics.
type constCollector []prometheus.Metric

func (c constCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		ch <- m.Desc()
	}
}

func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// processStart is when this process started, in seconds since the epoch, as component-base's
// GetProcessStart reads it: the boot time (/proc/stat's btime) plus the process's start in clock
// ticks since boot (/proc/self/stat's 22nd field), at 100 ticks a second. Where they cannot be
// read (not Linux), now, as the kubelet falls back.
func processStart(now time.Time) float64 {
	start, err := readProcessStart()
	if err != nil {
		klog.Background().V(2).Info("The process's start time is taken to be now", "err", err)
		return float64(now.Unix())
	}
	return start
}

func readProcessStart() (float64, error) {
	const userHZ = 100
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	// The command (field 2) is in parentheses and may hold spaces: fields count from after it.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc/self/stat: no command: %q", stat)
	}
	fields := bytes.Fields(stat[end+1:])
	const startField = 22 - 3 // field 3, the state, is the first after the command
	if len(fields) <= startField {
		return 0, fmt.Errorf("/proc/self/stat: %d fields after the command", len(fields))
	}
	ticks, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/stat: start time: %w", err)
	}
	system, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(system) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			boot, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: btime: %w", err)
			}
			return float64(boot) + float64(ticks)/userHZ, nil
		}
	}
	return 0, fmt.Errorf("/proc/stat: no btime")
}

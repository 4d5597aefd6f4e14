package api

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/podutil"
)

// msPoint is one point as metrics-server stores it (sigs.k8s.io/metrics-server
// pkg/storage.MetricsPoint): cumulative CPU in core-nanoseconds, working set in bytes, the
// sample's time, and a container's start.
type msPoint struct {
	StartTime         time.Time
	Timestamp         time.Time
	CumulativeCPUUsed uint64
	MemoryUsage       uint64
}

// msBatch is one scrape as metrics-server keeps it: the node's point, if complete, and each pod
// whose containers are all complete.
type msBatch struct {
	Node *msPoint
	Pods map[types.NamespacedName]map[string]msPoint
}

// decodeAsMetricsServer decodes a /metrics/resource answer as metrics-server v0.9.0's scraper
// does (pkg/scraper/client/resource/decode.go decodeBatch), with prometheus' text parser in
// place of its: it reads node_cpu_usage_seconds_total, node_memory_working_set_bytes,
// container_cpu_usage_seconds_total, container_memory_working_set_bytes and
// container_start_time_seconds, converts seconds to nanoseconds as it does (uint64(v*1e9)),
// stamps a sample with its own timestamp or else the scrape's time, keeps the node only with a
// timestamp and non-zero CPU and memory, and a pod only when each of its containers has non-zero
// CPU and memory. It fails where metrics-server would: a body the text parser refuses. Where
// metrics-server's label matching is looser (it finds container=", pod=" and namespace=" in the
// raw series), this is stricter: those three labels exactly, none empty.
//
// metrics-server itself is not imported: in go.mod, v0.9.0 (the only release for k8s.io v0.36)
// raises the go directive to 1.26.4 and, through MVS, the versions of modules the agent is
// built with (fsnotify, grpc, OpenTelemetry, kube-openapi past k8s.io v0.36.3's), and brings in
// github.com/prometheus/prometheus, etcd's client and zap for one unexported function.
func decodeAsMetricsServer(t *testing.T, body []byte, scraped time.Time) msBatch {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "the body does not parse:\n%s", body)

	stamp := func(m *dto.Metric) time.Time {
		if m.TimestampMs != nil {
			return time.Unix(0, m.GetTimestampMs()*1e6)
		}
		return time.Unix(0, scraped.UnixMilli()*1e6) // metrics-server's default, in ms
	}
	value := func(m *dto.Metric) float64 {
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
		t.Fatalf("a sample of neither counter, gauge nor untyped type: %v", m)
		return 0
	}
	node := msPoint{}
	for _, m := range families["node_cpu_usage_seconds_total"].GetMetric() {
		node.CumulativeCPUUsed, node.Timestamp = uint64(value(m)*1e9), stamp(m)
	}
	for _, m := range families["node_memory_working_set_bytes"].GetMetric() {
		node.MemoryUsage, node.Timestamp = uint64(value(m)), stamp(m)
	}

	pods := map[types.NamespacedName]map[string]msPoint{}
	container := func(m *dto.Metric) (types.NamespacedName, string, msPoint) {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		require.Len(t, labels, 3, "labels %v", labels)
		for _, name := range []string{"container", "pod", "namespace"} {
			require.NotEmpty(t, labels[name], "label %s of %v", name, labels)
		}
		ref := types.NamespacedName{Namespace: labels["namespace"], Name: labels["pod"]}
		if pods[ref] == nil {
			pods[ref] = map[string]msPoint{}
		}
		return ref, labels["container"], pods[ref][labels["container"]]
	}
	for _, m := range families["container_cpu_usage_seconds_total"].GetMetric() {
		ref, name, p := container(m)
		p.CumulativeCPUUsed, p.Timestamp = uint64(value(m)*1e9), stamp(m)
		pods[ref][name] = p
	}
	for _, m := range families["container_memory_working_set_bytes"].GetMetric() {
		ref, name, p := container(m)
		p.MemoryUsage, p.Timestamp = uint64(value(m)), stamp(m)
		pods[ref][name] = p
	}
	for _, m := range families["container_start_time_seconds"].GetMetric() {
		ref, name, p := container(m)
		p.StartTime = time.Unix(0, int64(value(m)*1e9))
		pods[ref][name] = p
	}

	batch := msBatch{Pods: map[types.NamespacedName]map[string]msPoint{}}
	if !node.Timestamp.IsZero() && node.CumulativeCPUUsed != 0 && node.MemoryUsage != 0 {
		batch.Node = &node
	}
	for ref, containers := range pods {
		complete := true
		for _, c := range containers {
			if c.CumulativeCPUUsed == 0 || c.MemoryUsage == 0 {
				complete = false // metrics-server drops the whole pod
			}
		}
		if complete {
			batch.Pods[ref] = containers
		}
	}
	return batch
}

// /metrics/resource, scraped as metrics-server scrapes it (a plain GET) through the real
// handler chain, decodes as metrics-server decodes it to the node and every pod the provider
// runs — an API pod with two containers, one with requests, and a static pod under its name —
// with the provider's numbers and sample times; the series it does not read are consistent.
func TestResourceMetricsAsMetricsServerReadsThem(t *testing.T) {
	e := newRouteEnv(t)
	web := testPod("ns", "web", "api-uid", podutil.APIServerSource, "main", "side")
	web.Spec.Containers[1].Resources.Requests = corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	e.run(t, web)
	static := testPod("kube-system", "etcd-node-a", "static-uid", podutil.FileSource, "etcd")
	e.run(t, static)
	e.pods.AddPod(mirrorOf(static, "mirror-uid"))
	e.clock.Step(10 * time.Second)

	srv := httptest.NewServer(guarded(t, Routes{Pods: e.pods, Provider: e.provider}))
	t.Cleanup(srv.Close)
	scraped := time.Now()
	resp, err := srv.Client().Get(srv.URL + "/metrics/resource")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	// metrics-server hands the body to its parser as text/plain whatever it is labelled.
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain; version=0.0.4")

	batch := decodeAsMetricsServer(t, body, scraped)
	at := time.Unix(0, e.clock.Now().UnixMilli()*1e6) // the provider's clock, in ms
	started := time.Unix(0, routeEpoch.UnixNano())
	const mi = 1 << 20
	// 10m (no requests) for 10 s is 0.1 core-seconds, 250m 2.5; 16Mi without requests.
	main := msPoint{StartTime: started, Timestamp: at, CumulativeCPUUsed: 1e8, MemoryUsage: 16 * mi}
	assert.Equal(t, map[types.NamespacedName]map[string]msPoint{
		{Namespace: "ns", Name: "web"}: {
			"main": main,
			"side": {StartTime: started, Timestamp: at, CumulativeCPUUsed: 25e8, MemoryUsage: 64 * mi},
		},
		{Namespace: "kube-system", Name: "etcd-node-a"}: {"etcd": main},
	}, batch.Pods)
	require.NotNil(t, batch.Node, "the node's point is complete:\n%s", body)
	assert.Equal(t, msPoint{Timestamp: at, CumulativeCPUUsed: 27e8, MemoryUsage: 96 * mi}, *batch.Node)

	// What metrics-server does not read, but the kubelet serves beside: pod sums and no error.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	podSeries := map[string]string{}
	for _, name := range []string{"pod_cpu_usage_seconds_total", "pod_memory_working_set_bytes"} {
		for _, m := range families[name].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			podSeries[fmt.Sprintf("%s %s/%s", name, labels["namespace"], labels["pod"])] = fmt.Sprint(v)
		}
	}
	assert.Equal(t, map[string]string{
		"pod_cpu_usage_seconds_total ns/web":                   "2.6",
		"pod_cpu_usage_seconds_total kube-system/etcd-node-a":  "0.1",
		"pod_memory_working_set_bytes ns/web":                  fmt.Sprint(float64(80 * mi)),
		"pod_memory_working_set_bytes kube-system/etcd-node-a": fmt.Sprint(float64(16 * mi)),
	}, podSeries)
	for _, name := range []string{"scrape_error", "resource_scrape_error"} {
		require.Len(t, families[name].GetMetric(), 1, name)
		assert.Zero(t, families[name].GetMetric()[0].GetGauge().GetValue(), name)
	}
}

// A scrape whose stats cannot be had decodes, as metrics-server decodes it, to nothing: no
// node, no pods — and scrape_error 1 — not to a parse error or zeros taken for usage.
func TestResourceMetricsWithoutStatsDecodeToNothing(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	srv := httptest.NewServer(guarded(t, Routes{Pods: e.pods, Provider: failingStats{bareProvider{e.provider}}}))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL + "/metrics/resource")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	batch := decodeAsMetricsServer(t, body, time.Now())
	assert.Nil(t, batch.Node)
	assert.Empty(t, batch.Pods)
	assert.Contains(t, string(body), "\nscrape_error 1\n")
}

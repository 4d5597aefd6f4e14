package api

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/podutil"
)

// fixedSummary is a provider whose Summary is s.
type fixedSummary struct {
	bareProvider
	s *statsv1alpha1.Summary
}

func (f fixedSummary) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	c := *f.s // the collector only reads it
	return &c, nil
}

// testNode is a Node as the agent registers it, for the machine metrics.
func testNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			NodeInfo: corev1.NodeSystemInfo{MachineID: "machine-1", SystemUUID: "uuid-1", BootID: "boot-1"},
		},
	}
}

// scrape GETs path from srv and returns the status, content type and body.
func scrape(t *testing.T, srv *httptest.Server, path string) (int, string, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

// /metrics/cadvisor is the Summary as cAdvisor's series, text for text: the machine's root
// cgroup (id "/"), each pod's cgroup (container and image empty, the pod's own network) and
// each container's (its image from the pod's spec, its writable layer as its filesystem), with
// cAdvisor's names, help, types, labels, units (seconds, bytes) and the samples' times; the
// machine metrics from the Node; container_scrape_error 0.
func TestCadvisorMetrics(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) // 1767323045000 ms
	started := metav1.NewTime(time.Date(2026, 1, 2, 3, 0, 0, 500e6, time.UTC))
	u := func(v uint64) *uint64 { return &v }
	psi := &statsv1alpha1.PSIStats{Full: statsv1alpha1.PSIData{Total: 1_500_000}, Some: statsv1alpha1.PSIData{Total: 2_500_000}}
	summary := &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{
			NodeName: "node-a", StartTime: started,
			CPU:    &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: u(90e9)},
			Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: u(3000), UsageBytes: u(4000)},
			Fs:     &statsv1alpha1.FsStats{Time: at, UsedBytes: u(100), CapacityBytes: u(1000), InodesFree: u(7), Inodes: u(9)},
		},
		Pods: []statsv1alpha1.PodStats{{
			PodRef:    statsv1alpha1.PodReference{Namespace: "ns", Name: "web", UID: "api-uid"},
			StartTime: started,
			CPU:       &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: u(2_500_000_000), PSI: psi},
			Memory:    &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: u(300), UsageBytes: u(400), RSSBytes: u(200)},
			Network: &statsv1alpha1.NetworkStats{Time: at, Interfaces: []statsv1alpha1.InterfaceStats{
				{Name: "eth0", RxBytes: u(10), RxErrors: u(1), TxBytes: u(20), TxErrors: u(2)}}},
			Containers: []statsv1alpha1.ContainerStats{{
				Name: "main", StartTime: started,
				CPU:    &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: u(2_000_000_000)},
				Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: u(200), UsageBytes: u(300), RSSBytes: u(150)},
				Rootfs: &statsv1alpha1.FsStats{Time: at, UsedBytes: u(50), CapacityBytes: u(1000)},
			}, {
				// No CPU time yet, and only a working set: cAdvisor leaves a zero total out.
				Name: "side", StartTime: started,
				CPU:    &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: u(0)},
				Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: u(100)},
			}},
		}},
	}
	pods := podmanager.NewBasicPodManager()
	pods.AddPod(testPod("ns", "web", "api-uid", podutil.APIServerSource, "main", "side"))
	srv := httptest.NewServer(guarded(t, Routes{Pods: pods, Provider: fixedSummary{s: summary}, Node: testNode()}))
	t.Cleanup(srv.Close)

	code, contentType, body := scrape(t, srv, "/metrics/cadvisor")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, contentType, "text/plain; version=0.0.4")
	assert.Equal(t, `# HELP container_cpu_usage_seconds_total Cumulative cpu time consumed in seconds.
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="",cpu="total",id="/",image="",name="",namespace="",pod=""} 90 1767323045000
container_cpu_usage_seconds_total{container="",cpu="total",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 2.5 1767323045000
container_cpu_usage_seconds_total{container="main",cpu="total",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 2 1767323045000
# HELP container_fs_inodes_free Number of available Inodes
# TYPE container_fs_inodes_free gauge
container_fs_inodes_free{container="",device="",id="/",image="",name="",namespace="",pod=""} 7 1767323045000
# HELP container_fs_inodes_total Number of Inodes
# TYPE container_fs_inodes_total gauge
container_fs_inodes_total{container="",device="",id="/",image="",name="",namespace="",pod=""} 9 1767323045000
# HELP container_fs_limit_bytes Number of bytes that can be consumed by the container on this filesystem.
# TYPE container_fs_limit_bytes gauge
container_fs_limit_bytes{container="",device="",id="/",image="",name="",namespace="",pod=""} 1000 1767323045000
container_fs_limit_bytes{container="main",device="",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 1000 1767323045000
# HELP container_fs_usage_bytes Number of bytes that are consumed by the container on this filesystem.
# TYPE container_fs_usage_bytes gauge
container_fs_usage_bytes{container="",device="",id="/",image="",name="",namespace="",pod=""} 100 1767323045000
container_fs_usage_bytes{container="main",device="",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 50 1767323045000
# HELP container_memory_rss Size of RSS in bytes.
# TYPE container_memory_rss gauge
container_memory_rss{container="",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 200 1767323045000
container_memory_rss{container="main",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 150 1767323045000
# HELP container_memory_usage_bytes Current memory usage in bytes, including all memory regardless of when it was accessed
# TYPE container_memory_usage_bytes gauge
container_memory_usage_bytes{container="",id="/",image="",name="",namespace="",pod=""} 4000 1767323045000
container_memory_usage_bytes{container="",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 400 1767323045000
container_memory_usage_bytes{container="main",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 300 1767323045000
# HELP container_memory_working_set_bytes Current working set in bytes.
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="",id="/",image="",name="",namespace="",pod=""} 3000 1767323045000
container_memory_working_set_bytes{container="",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 300 1767323045000
container_memory_working_set_bytes{container="main",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 200 1767323045000
container_memory_working_set_bytes{container="side",id="/podapi-uid/side",image="img-side",name="",namespace="ns",pod="web"} 100 1767323045000
# HELP container_network_receive_bytes_total Cumulative count of bytes received
# TYPE container_network_receive_bytes_total counter
container_network_receive_bytes_total{container="",id="/podapi-uid",image="",interface="eth0",name="",namespace="ns",pod="web"} 10 1767323045000
# HELP container_network_receive_errors_total Cumulative count of errors encountered while receiving
# TYPE container_network_receive_errors_total counter
container_network_receive_errors_total{container="",id="/podapi-uid",image="",interface="eth0",name="",namespace="ns",pod="web"} 1 1767323045000
# HELP container_network_transmit_bytes_total Cumulative count of bytes transmitted
# TYPE container_network_transmit_bytes_total counter
container_network_transmit_bytes_total{container="",id="/podapi-uid",image="",interface="eth0",name="",namespace="ns",pod="web"} 20 1767323045000
# HELP container_network_transmit_errors_total Cumulative count of errors encountered while transmitting
# TYPE container_network_transmit_errors_total counter
container_network_transmit_errors_total{container="",id="/podapi-uid",image="",interface="eth0",name="",namespace="ns",pod="web"} 2 1767323045000
# HELP container_pressure_cpu_stalled_seconds_total Total time duration no tasks in the container could make progress due to CPU congestion.
# TYPE container_pressure_cpu_stalled_seconds_total counter
container_pressure_cpu_stalled_seconds_total{container="",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 1.5 1767323045000
# HELP container_pressure_cpu_waiting_seconds_total Total time duration tasks in the container have waited due to CPU congestion.
# TYPE container_pressure_cpu_waiting_seconds_total counter
container_pressure_cpu_waiting_seconds_total{container="",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 2.5 1767323045000
# HELP container_scrape_error 1 if there was an error while getting container metrics, 0 otherwise
# TYPE container_scrape_error gauge
container_scrape_error 0
# HELP container_start_time_seconds Start time of the container since unix epoch in seconds.
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="",id="/",image="",name="",namespace="",pod=""} 1.7673228e+09
container_start_time_seconds{container="",id="/podapi-uid",image="",name="",namespace="ns",pod="web"} 1.7673228e+09
container_start_time_seconds{container="main",id="/podapi-uid/main",image="img-main",name="",namespace="ns",pod="web"} 1.7673228e+09
container_start_time_seconds{container="side",id="/podapi-uid/side",image="img-side",name="",namespace="ns",pod="web"} 1.7673228e+09
# HELP machine_cpu_cores Number of logical CPU cores.
# TYPE machine_cpu_cores gauge
machine_cpu_cores{boot_id="boot-1",machine_id="machine-1",system_uuid="uuid-1"} 4
# HELP machine_memory_bytes Amount of memory installed on the machine.
# TYPE machine_memory_bytes gauge
machine_memory_bytes{boot_id="boot-1",machine_id="machine-1",system_uuid="uuid-1"} 8.589934592e+09
`, body)
}

// The mock provider's pods scrape like any provider's: a series per container, with its image,
// and per pod; a provider without stats serves the machine metrics and no error; one whose
// Summary fails, container_scrape_error 1 — never a failed scrape.
func TestCadvisorMetricsFromEveryProvider(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	e.clock.Step(10 * time.Second)
	families := func(t *testing.T, rt Routes) map[string]map[string]float64 {
		t.Helper()
		srv := httptest.NewServer(guarded(t, rt))
		t.Cleanup(srv.Close)
		code, _, body := scrape(t, srv, "/metrics/cadvisor")
		require.Equal(t, http.StatusOK, code, body)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		parsed, err := parser.TextToMetricFamilies(bytes.NewReader([]byte(body)))
		require.NoError(t, err, body)
		out := map[string]map[string]float64{}
		for name, f := range parsed {
			out[name] = map[string]float64{}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				key := labels["namespace"] + "/" + labels["pod"] + "/" + labels["container"] + "/" + labels["image"]
				out[name][key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		return out
	}

	got := families(t, Routes{Pods: e.pods, Provider: e.provider, Node: testNode()})
	// 10m of CPU for 10 s, 16Mi: the mock's numbers, as on /metrics/resource.
	assert.Equal(t, map[string]float64{"ns/web/main/img-main": 0.1, "ns/web//": 0.1, "///": 0.1}, got["container_cpu_usage_seconds_total"])
	assert.Equal(t, map[string]float64{"ns/web/main/img-main": 16 << 20, "ns/web//": 16 << 20, "///": 16 << 20}, got["container_memory_working_set_bytes"])
	assert.Equal(t, map[string]float64{"///": 0}, got["container_scrape_error"])
	assert.Len(t, got["machine_cpu_cores"], 1)

	got = families(t, Routes{Pods: e.pods, Provider: bareProvider{e.provider}, Node: testNode()})
	assert.Equal(t, []string{"container_scrape_error", "machine_cpu_cores", "machine_memory_bytes"}, slices.Sorted(maps.Keys(got)))
	assert.Equal(t, map[string]float64{"///": 0}, got["container_scrape_error"])

	got = families(t, Routes{Pods: e.pods, Provider: failingStats{bareProvider{e.provider}}})
	assert.Equal(t, map[string]map[string]float64{"container_scrape_error": {"///": 1}}, got)
}

package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/podutil"
)

// /stats/summary is the provider's Summary; /metrics/resource the same numbers as the kubelet's
// resource metrics, with its names and labels; a provider without stats is 501 on both.
func TestStats(t *testing.T) {
	e := newRouteEnv(t)
	e.run(t, testPod("ns", "web", "api-uid", podutil.APIServerSource, "main"))
	e.clock.Step(10 * time.Second) // CPU time accrues on the provider's clock

	code, body := e.get(t, "/stats/summary")
	require.Equal(t, http.StatusOK, code, body)
	var s statsv1alpha1.Summary
	require.NoError(t, json.Unmarshal([]byte(body), &s), body)
	assert.Equal(t, "node-a", s.Node.NodeName)
	require.Len(t, s.Pods, 1, body)
	assert.Equal(t, "web", s.Pods[0].PodRef.Name)
	assert.Equal(t, "api-uid", s.Pods[0].PodRef.UID)
	require.Len(t, s.Pods[0].Containers, 1)

	code, body = e.get(t, "/metrics/resource")
	require.Equal(t, http.StatusOK, code, body)
	// The mock's container without requests uses 10m of CPU, so 0.1 core-seconds in 10 s, and
	// 16Mi; samples are stamped with the provider's time.
	ms := e.clock.Now().UnixMilli()
	for _, want := range []string{
		`container_cpu_usage_seconds_total{container="main",namespace="ns",pod="web"} 0.1 ` + itoa(ms),
		`container_memory_working_set_bytes{container="main",namespace="ns",pod="web"} 1.6777216e+07 ` + itoa(ms),
		`container_start_time_seconds{container="main",namespace="ns",pod="web"} 1.767323045e+09` + "\n", // routeEpoch, untimed
		`pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 0.1 ` + itoa(ms),
		`pod_memory_working_set_bytes{namespace="ns",pod="web"} 1.6777216e+07 ` + itoa(ms),
		"\nnode_cpu_usage_seconds_total ",
		"\nnode_memory_working_set_bytes ",
		"\nscrape_error 0\n",
		"\nresource_scrape_error 0\n",
		"# TYPE container_cpu_usage_seconds_total counter",
	} {
		assert.Contains(t, body, want)
	}

	e.provider = failingStats{bareProvider{e.provider}}
	e.serve(t)
	code, body = e.get(t, "/metrics/resource")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "\nscrape_error 1\n")
	assert.NotContains(t, body, "node_cpu_usage_seconds_total ")
	code, body = e.get(t, "/stats/summary")
	assert.Equal(t, http.StatusInternalServerError, code, body)

	e.provider = bareProvider{e.mock}
	e.serve(t)
	for _, path := range []string{"/stats/summary", "/metrics/resource"} {
		code, body := e.get(t, path)
		assert.Equal(t, http.StatusNotImplemented, code, body)
		assert.Contains(t, body, "StatsSummaryHandler", path)
	}
}

// failingStats has stats that cannot be had.
type failingStats struct{ bareProvider }

func (failingStats) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return nil, errors.New("the stats are unavailable")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// only_cpu_and_memory=true keeps what the kubelet's GetCPUAndMemoryStats keeps: CPU, memory
// and swap, the start times and the node's system containers; no filesystems, network, I/O,
// volumes or processes.
func TestCPUAndMemoryOnly(t *testing.T) {
	start := metav1.Unix(1, 0)
	cpu := &statsv1alpha1.CPUStats{UsageNanoCores: ptr.To[uint64](5)}
	mem := &statsv1alpha1.MemoryStats{WorkingSetBytes: ptr.To[uint64](6)}
	fs := &statsv1alpha1.FsStats{UsedBytes: ptr.To[uint64](7)}
	io := &statsv1alpha1.IOStats{}
	full := &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{NodeName: "n", StartTime: start, CPU: cpu, Memory: mem, Fs: fs, IO: io,
			Network:          &statsv1alpha1.NetworkStats{},
			SystemContainers: []statsv1alpha1.ContainerStats{{Name: "kubelet", CPU: cpu, Memory: mem, Rootfs: fs}}},
		Pods: []statsv1alpha1.PodStats{{
			PodRef: statsv1alpha1.PodReference{Name: "p", Namespace: "ns", UID: "u"}, StartTime: start, CPU: cpu, Memory: mem, IO: io,
			Network: &statsv1alpha1.NetworkStats{}, EphemeralStorage: fs, VolumeStats: []statsv1alpha1.VolumeStats{{Name: "v"}},
			ProcessStats: &statsv1alpha1.ProcessStats{ProcessCount: ptr.To[uint64](1)},
			Containers:   []statsv1alpha1.ContainerStats{{Name: "c", StartTime: start, CPU: cpu, Memory: mem, Rootfs: fs, Logs: fs, IO: io}},
		}},
	}
	assert.Equal(t, &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{NodeName: "n", StartTime: start, CPU: cpu, Memory: mem,
			SystemContainers: []statsv1alpha1.ContainerStats{{Name: "kubelet", CPU: cpu, Memory: mem}}},
		Pods: []statsv1alpha1.PodStats{{
			PodRef: statsv1alpha1.PodReference{Name: "p", Namespace: "ns", UID: "u"}, StartTime: start, CPU: cpu, Memory: mem,
			Containers: []statsv1alpha1.ContainerStats{{Name: "c", StartTime: start, CPU: cpu, Memory: mem}},
		}},
	}, cpuAndMemory(full))
}

package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/bench/criproxy"
)

func TestHistogramBuckets(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	got := histogram([]time.Duration{ms(0.5), ms(1), ms(1.5), ms(150), ms(200), ms(70000)})
	assert.Equal(t, []HistogramBucket{
		{LeMs: 1, Count: 2},   // a bound holds the samples equal to it
		{LeMs: 2, Count: 1},   //
		{LeMs: 200, Count: 2}, // empty buckets between are left out
		{Count: 1},            // above every bound
	}, got)
	assert.Empty(t, histogram(nil))
}

func TestCRICallsSummariseTheProxysRecording(t *testing.T) {
	var durations []time.Duration
	for i := 1; i <= 100; i++ {
		durations = append(durations, time.Duration(i)*time.Millisecond)
	}
	got := criCalls(map[string]criproxy.Calls{"RunPodSandbox": {Durations: durations, Errors: 2, MaxInFlight: 50}})
	c := got["RunPodSandbox"]
	assert.Equal(t, 100, c.Calls)
	assert.Equal(t, 2, c.Errors)
	assert.Equal(t, 50, c.MaxInFlight)
	assert.InDelta(t, 0.050, c.Latency.P50, 1e-9)
	assert.InDelta(t, 0.090, c.Latency.P90, 1e-9)
	assert.InDelta(t, 0.099, c.Latency.P99, 1e-9)
	assert.InDelta(t, 5.050, c.TotalSeconds, 1e-9)
	var n int
	for _, b := range c.Histogram {
		n += b.Count
	}
	assert.Equal(t, 100, n)
	assert.Nil(t, criCalls(nil))
}

func TestCRIMethodOrderStartCallsFirst(t *testing.T) {
	assert.Equal(t, []string{"RunPodSandbox", "CreateContainer", "StartContainer", "ContainerStatus", "ImageStatus"},
		criMethodOrder([]string{"ImageStatus", "StartContainer", "ContainerStatus", "RunPodSandbox", "CreateContainer", "ImageStatus"}))
}

func TestWritePeerTableCRICalls(t *testing.T) {
	run := func(peer string, round int, p50 float64, calls map[string]int) *Result {
		c := map[string]CRICall{}
		for m, n := range calls {
			c[m] = CRICall{Calls: n, Latency: Percentiles{N: n, P50: p50, P90: 2 * p50, P99: 3 * p50}, MaxInFlight: n}
		}
		return &Result{Scenario: "cri-50", Peer: peer, Round: round, AllRunningSeconds: 1, CRI: &CRIResult{StartCalls: c}}
	}
	start := map[string]int{"RunPodSandbox": 50, "CreateContainer": 50, "StartContainer": 50}
	results := []*Result{
		run("", 1, 0.1, map[string]int{"RunPodSandbox": 50, "CreateContainer": 50, "StartContainer": 50, "ImageStatus": 50}),
		run(PeerCRIFloor, 1, 0.05, start),
		run("", 2, 0.3, map[string]int{"RunPodSandbox": 50, "CreateContainer": 50, "StartContainer": 50, "ImageStatus": 50}),
		run(PeerCRIFloor, 2, 0.05, start),
		run("", 3, 0.2, map[string]int{"RunPodSandbox": 50, "CreateContainer": 50, "StartContainer": 50, "ImageStatus": 50}),
		run(PeerCRIFloor, 3, 0.05, start),
	}
	var buf bytes.Buffer
	WritePeerTable(&buf, results, []string{PeerVKStatic, PeerKubelet, PeerCRIFloor})
	out := buf.String()
	require.Contains(t, out, "CRI calls while the pods started")
	lines := strings.Split(out, "\n")
	var rows []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && strings.HasSuffix(f[0], "Container") || strings.HasPrefix(strings.TrimSpace(l), "RunPodSandbox") || strings.HasPrefix(strings.TrimSpace(l), "ImageStatus") {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
	}
	assert.Equal(t, []string{
		"RunPodSandbox 50 200/400/600 50 50 50/100/150 50", // vk-static's median round, the floor's
		"CreateContainer 50 200/400/600 50 50 50/100/150 50",
		"StartContainer 50 200/400/600 50 50 50/100/150 50",
		"ImageStatus 50 200/400/600 50 -", // the floor makes no such call
	}, rows)
}

func TestWriteTableCRICalls(t *testing.T) {
	r := &Result{Scenario: "cri-50", CRI: &CRIResult{StartCalls: map[string]CRICall{
		"StartContainer": {Calls: 50, Latency: Percentiles{N: 50, P50: 0.01, P90: 0.02, P99: 0.03, Max: 0.04}, MaxInFlight: 7},
	}}}
	var buf bytes.Buffer
	WriteTable(&buf, []*Result{r})
	assert.Contains(t, strings.Join(strings.Fields(buf.String()), " "), "StartContainer 50 10.0/20.0/30.0/40.0 7")
}

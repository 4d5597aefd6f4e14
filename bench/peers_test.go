package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWritePeerTableMediansAndRatios(t *testing.T) {
	run := func(peer string, round int, running, rss float64) *Result {
		return &Result{Scenario: "api-1k", Peer: peer, Round: round, AllRunningSeconds: running, PeakRSSMB: rss,
			StartCPUSeconds: 1, DeleteCPUSeconds: 1, DeleteSeconds: 4, StartLatency: Percentiles{P99: 2}}
	}
	results := []*Result{
		run("", 1, 3, 60), run(PeerFloor, 1, 2, 40),
		run("", 2, 5, 80), run(PeerFloor, 2, 2, 40),
		run("", 3, 4, 70), run(PeerFloor, 3, 100, 40), // an outlier round moves no median
	}
	var buf bytes.Buffer
	WritePeerTable(&buf, results, []string{PeerVKStatic, PeerFloor})
	out := buf.String()

	assert.Contains(t, out, "api-1k: medians of 3 round(s)")
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 {
			rows[strings.Join(f[:len(f)-3], " ")] = f[len(f)-3:]
		}
	}
	tests := []struct{ row, vk, floor, ratio string }{
		{"all Running s", "4.00", "2.00", "2.00×"},
		{"peak RSS MB", "70.00", "40.00", "1.75×"},
		{"agent CPU s", "2.00", "2.00", "1.00×"},
		{"start p99 s", "2.00", "2.00", "1.00×"},
		{"all deleted s", "4.00", "4.00", "1.00×"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.vk, tt.floor, tt.ratio}, rows[tt.row], tt.row)
	}
}

func TestRatioOfUnmeasured(t *testing.T) {
	assert.Equal(t, "-", ratio(0, 1))
	assert.Equal(t, "-", ratio(1, 0))
	assert.Equal(t, "0.50×", ratio(1, 2))
}

func TestPeerGoalsEveryRoundAndMedians(t *testing.T) {
	run := func(peer string, round int, running, cpu, rss, del float64) *Result {
		writes := map[string]float64{"PATCH pods/status": 1000, "POST events": 1000} // vk-static: 2 a pod
		if peer != "" {
			writes = map[string]float64{"PATCH pods/status": 1000}
		}
		return &Result{Scenario: "api-1k", Peer: peer, Round: round, AllRunningSeconds: running,
			StartCPUSeconds: cpu, PeakRSSMB: rss, DeleteSeconds: del, StartLatency: Percentiles{P99: 1},
			StartRequests: writes}
	}
	_, by := groupPeerRuns([]*Result{
		run("", 1, 3, 2, 45, 6), run(PeerFloor, 1, 3.1, 1, 40, 4), run(PeerKWOK, 1, 4, 3, 70, 5),
		run("", 2, 3.3, 2, 48, 6), run(PeerFloor, 2, 3, 2, 40, 4), run(PeerKWOK, 2, 4, 3, 70, 5),
		run("", 3, 3, 2, 60, 6), run(PeerFloor, 3, 3.2, 2, 40, 4), run(PeerKWOK, 3, 4, 3, 70, 5),
	})
	got := map[string]Goal{}
	for _, g := range peerGoals("api-1k", by["api-1k"]) {
		got[g.Name+" | "+g.Target] = g
	}
	tests := []struct {
		key   string
		value float64
		met   bool
	}{
		// 3.3/3 = 1.1 in round 2: one round over is enough to miss.
		{"all Running | ≤ 1.00× floor in every round", 1.1, false},
		{"all Running | ≤ 0.85× kwok in every round", 3.3 / 4, true},
		{"start p99 | ≤ 1.00× floor", 1, true},
		// medians 2 s over 2000 writes vs 2 s over 1000: half the floor's CPU per write.
		{"agent CPU per write | ≤ 0.80× floor", 0.5, true},
		{"peak RSS (median) | ≤ 50 MB", 48, true},
		{"all deleted | ≤ 1.50× floor", 1.5, true},
	}
	require.Len(t, got, len(tests))
	for _, tt := range tests {
		g, ok := got[tt.key]
		require.True(t, ok, tt.key)
		assert.InDelta(t, tt.value, g.Value, 1e-9, tt.key)
		assert.Equal(t, tt.met, g.Met, tt.key)
	}
	assert.Equal(t, "rounds 0.97× 1.10× 0.94×", got["all Running | ≤ 1.00× floor in every round"].Measured)
}

func TestPeerGoalsLeaveOutPeersNotRun(t *testing.T) {
	_, by := groupPeerRuns([]*Result{
		{Scenario: "api-10k", Round: 1, AllRunningSeconds: 30, PeakRSSMB: 250},
		{Scenario: "api-10k", Peer: PeerKWOK, Round: 1, AllRunningSeconds: 40},
	})
	goals := peerGoals("api-10k", by["api-10k"])
	require.Len(t, goals, 1, "no floor: only the absolute RSS goal")
	assert.Equal(t, "peak RSS (median)", goals[0].Name)
	assert.False(t, goals[0].Met)
	assert.Empty(t, peerGoals("static-1k", by["api-10k"]), "static-1k has no side-by-side goals")
}

// cri-50 beside the kubelet adds the runtime's rows; a scenario without a runtime has none.
func TestWritePeerTableCRIRows(t *testing.T) {
	run := func(peer string, round int, agentCPU, shimsGone float64) *Result {
		return &Result{Scenario: "cri-50", Peer: peer, Round: round, AllRunningSeconds: 2, StartCPUSeconds: agentCPU,
			Idle: &IdleResult{CPUPercent: 1}, CRI: &CRIResult{StartContainerdCPUSeconds: 1, StartShimCPUSeconds: 2,
				ShimPssSumMB: 50, ShimsGoneSeconds: shimsGone, ContainersGoneSeconds: 60}}
	}
	var buf bytes.Buffer
	WritePeerTable(&buf, []*Result{run("", 1, 1, 3), run(PeerKubelet, 1, 4, 6)}, []string{PeerVKStatic, PeerKubelet})
	out := buf.String()
	assert.Regexp(t, `agent CPU s \(start\)\s+1\.00\s+4\.00\s+0\.25×`, out)
	assert.Regexp(t, `containerd\+shims CPU s \(start\)\s+3\.00\s+3\.00\s+1\.00×`, out)
	assert.Regexp(t, `removed: shims gone s\s+3\.00\s+6\.00\s+0\.50×`, out)
	assert.Regexp(t, `removed: containerd empty s\s+60\.00\s+60\.00\s+1\.00×`, out)

	buf.Reset()
	WritePeerTable(&buf, []*Result{{Scenario: "api-1k", AllRunningSeconds: 1}}, []string{PeerVKStatic})
	assert.NotContains(t, buf.String(), "shims")
}

// A peer's binary and the run's runtime socket differ on every run: left out of the result.
func TestRedactArgsPeerPaths(t *testing.T) {
	assert.Equal(t, []string{"--provider", "cri", "-v", "1"},
		redactArgs([]string{"--provider", "cri", "--container-runtime-endpoint", "unix:///tmp/x/containerd.sock", "--kubelet", "/c/kubelet", "-v", "1"}))
}

// A failed round is left out of the medians and the ratios — a run whose pods never started
// looks fast, and a run that measured nothing has zeros — and the table says which run failed.
func TestWritePeerTableLeavesOutFailedRuns(t *testing.T) {
	run := func(peer string, round int, running, rss, del float64) *Result {
		return &Result{Scenario: "api-1k", Peer: peer, Round: round, AllRunningSeconds: running, PeakRSSMB: rss,
			StartCPUSeconds: 1, DeleteSeconds: del, StartLatency: Percentiles{P99: 2}}
	}
	fast := run("", 2, 0.5, 40, 0) // 990 pods never started; deletion never measured
	fast.Error = "990 of 1000 pods never Running"
	crashed := run(PeerFloor, 3, 0, 0, 0)
	crashed.Error = "agent vkbench-api-1k-abc exited before the harness stopped it"
	results := []*Result{
		run("", 1, 3, 60, 6), run(PeerFloor, 1, 2, 40, 4),
		fast, run(PeerFloor, 2, 2, 40, 4),
		run("", 3, 5, 80, 8), crashed,
	}
	var buf bytes.Buffer
	WritePeerTable(&buf, results, []string{PeerVKStatic, PeerFloor})
	out := buf.String()
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 4 {
			rows[strings.Join(f[:len(f)-3], " ")] = f[len(f)-3:]
		}
	}
	// vk-static: rounds 1 and 3 only; the floor: rounds 1 and 2.
	assert.Equal(t, []string{"4.00", "2.00", "2.00×"}, rows["all Running s"])
	assert.Equal(t, []string{"70.00", "40.00", "1.75×"}, rows["peak RSS MB"])
	assert.Equal(t, []string{"7.00", "4.00", "1.75×"}, rows["all deleted s"])
	assert.Contains(t, out, "api-1k: medians of 2 round(s), alternating on one control plane; 2 FAILED run(s) left out")
	assert.Contains(t, out, "all Running by round, vk-static: 3.00, FAILED, 5.00 s")
	assert.Contains(t, out, "all Running by round, floor: 2.00, 2.00, FAILED s")
	assert.Contains(t, out, "FAILED: api-1k vk-static round 2: 990 of 1000 pods never Running")
	assert.Contains(t, out, "FAILED: api-1k floor round 3: agent vkbench-api-1k-abc exited before the harness stopped it")

	_, by := groupPeerRuns(results)
	for _, g := range peerGoals("api-1k", by["api-1k"]) {
		if g.Name == "all Running" && g.Target == "≤ 1.00× floor in every round" {
			assert.Equal(t, "rounds 1.50× (round 2 FAILED)", g.Measured, "round 3 has no floor to compare with")
			assert.False(t, g.Met, "a failed round is a round the goal was not met in")
		}
	}
}

func TestBaselineRunsAsVKStaticInEveryScenarioWithPeers(t *testing.T) {
	api := Scenario{Name: "api-1k", Peers: []string{PeerFloor, PeerKWOK}}
	cri := Scenario{Name: "cri-50", Peers: []string{PeerKubelet, PeerCRIFloor}}
	for _, sc := range []Scenario{api, cri} {
		assert.True(t, Peer{Name: PeerBaseline}.runsIn(sc), sc.Name)
		assert.True(t, Peer{Name: PeerVKStatic}.runsIn(sc), sc.Name)
	}
	assert.True(t, Peer{Name: PeerFloor}.runsIn(api))
	assert.False(t, Peer{Name: PeerFloor}.runsIn(cri))
	assert.True(t, Peer{Name: PeerBaseline}.isVKStatic(), "the baseline takes vk-static's flags")
	assert.False(t, Peer{Name: PeerKWOK}.isVKStatic())
}

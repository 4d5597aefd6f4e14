package bench

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarkFailed(t *testing.T) {
	tests := []struct {
		name   string
		res    Result
		err    error
		failed bool
		want   []string // in Error
	}{
		{"every pod ran", Result{Pods: 1000, StartLatency: Percentiles{N: 1000}}, nil, false, nil},
		{"a scenario without a start phase", Result{Pods: 10}, nil, false, nil},
		// What the stall path of finishStart leaves: the last pod that did run sets
		// AllRunningSeconds, and the run looks fast.
		{"pods never Running", Result{Pods: 1000, AllRunningSeconds: 0.5, NeverRunning: 3, NeverRunningPods: "pod-00007: phase \"Pending\"",
			StartLatency: Percentiles{N: 997}}, nil, true, []string{"3 of 1000 pods never Running", "pod-00007"}},
		{"fewer seen Running than started", Result{Pods: 100, StartLatency: Percentiles{N: 60}}, nil, true, []string{"only 60 of 100 pods seen Running"}},
		{"the scenario's error", Result{Pods: 1000, StartLatency: Percentiles{N: 1000}}, errors.New("all pods deleted: not within 5m0s"), true,
			[]string{"all pods deleted: not within 5m0s"}},
		{"a reason already recorded is not repeated", Result{Pods: 100, StartLatency: Percentiles{N: 100}, Error: "3 container processes left"},
			errors.New("3 container processes left"), true, []string{"3 container processes left"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			markFailed(&tt.res, tt.err)
			assert.Equal(t, tt.failed, tt.res.Failed(), "Error %q", tt.res.Error)
			for _, w := range tt.want {
				assert.Equal(t, 1, strings.Count(tt.res.Error, w), "%q once in %q", w, tt.res.Error)
			}
		})
	}
}

// The run's error keeps what the scenario returned, so that vkbench still stops on an interrupt.
func TestRunFailureWrapsTheScenarioError(t *testing.T) {
	res := &Result{Pods: 10, NeverRunning: 10}
	markFailed(res, context.Canceled)
	err := error(runFailure{reason: res.Error, cause: context.Canceled})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "10 of 10 pods never Running")
}

// No pod Running: nothing to time, rather than a start time of year one.
func TestFillStartLatenciesNoPodRunning(t *testing.T) {
	start := time.Now()
	res := &Result{Pods: 2}
	fillStartLatencies(res, []podTimes{{Name: "a"}, {Name: "b"}}, []string{"a", "b"}, []time.Time{start, start}, start)
	assert.Zero(t, res.AllRunningSeconds)
	assert.Zero(t, res.PodsPerSecond)
	assert.Zero(t, res.StartLatency.N)
}

// A result file written before runs were marked: its failed runs are marked when read.
func TestReadJSONMarksUnmarkedFailedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.json")
	require.NoError(t, WriteJSON(path, &Report{Results: []*Result{
		{Scenario: "api-1k", Pods: 1000, NeverRunning: 1, AllRunningSeconds: 4, StartLatency: Percentiles{N: 999}},
		{Scenario: "static-1k", Pods: 1000, AllRunningSeconds: 3, StartLatency: Percentiles{N: 1000}},
	}}))
	rep, err := ReadJSON(path)
	require.NoError(t, err)
	assert.True(t, rep.Results[0].Failed())
	assert.Contains(t, rep.Results[0].Error, "1 of 1000 pods never Running")
	assert.False(t, rep.Results[1].Failed())
}

// A failed run is compared with nothing, and Compare says so and fails.
func TestCompareFailsOnFailedRuns(t *testing.T) {
	old := &Report{Commit: "aaa", Results: []*Result{
		{Scenario: "api-1k", AllRunningSeconds: 4, PeakRSSMB: 80},
		{Scenario: "static-1k", AllRunningSeconds: 3, PeakRSSMB: 80},
	}}
	cur := &Report{Commit: "bbb", Results: []*Result{
		{Scenario: "api-1k", Pods: 1000, AllRunningSeconds: 0.5, PeakRSSMB: 40, Error: "999 of 1000 pods never Running"},
		{Scenario: "static-1k", AllRunningSeconds: 3, PeakRSSMB: 80},
	}, Peers: []*Result{
		{Scenario: "api-1k", Peer: PeerFloor, Round: 1, AllRunningSeconds: 2, Error: "agent exited before the harness stopped it"},
	}}
	var buf bytes.Buffer
	err := Compare(&buf, old, cur, 0.1)
	out := strings.Join(strings.Fields(buf.String()), " ")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "api-1k: 999 of 1000 pods never Running")
	assert.Contains(t, err.Error(), "api-1k floor round 1: agent exited")
	assert.Contains(t, out, "api-1k FAILED ok failed")
	assert.Contains(t, out, "FAILED: api-1k: 999 of 1000 pods never Running")
	assert.Contains(t, out, "FAILED: api-1k floor round 1: agent exited before the harness stopped it")
	assert.NotContains(t, out, "api-1k all Running s", "a failed run's numbers are not compared")
	assert.Contains(t, out, "static-1k all Running s 3 3 1.00x ~", "the good runs still are")

	buf.Reset()
	assert.NoError(t, Compare(&buf, old, old, 0.1))
	assert.NotContains(t, buf.String(), "FAILED")
}

// A -peers run's Results repeat vk-static's last round: a failed one is listed once.
func TestAllRunsListsEachRunOnce(t *testing.T) {
	last := Result{Scenario: "api-1k", Round: 3, Error: "x"}
	copied := last
	rep := &Report{Results: []*Result{&copied, {Scenario: "edit-latency"}}, Peers: []*Result{{Scenario: "api-1k", Round: 2}, &last}}
	assert.Len(t, allRuns(rep), 3)
	assert.Len(t, failedRuns(allRuns(rep)), 1)
}

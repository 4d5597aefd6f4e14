package bench

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGoalsFor(t *testing.T) {
	tests := []struct {
		name string
		res  Result
		want map[string]bool // goal name → met
	}{
		{"api-1k all met", Result{Scenario: "api-1k", AllRunningSeconds: 5, CPUMsPerPod: 2, PeakRSSMB: 50, WritesPerPod: 2},
			map[string]bool{"all Running": true, "agent CPU per pod": true, "peak RSS": true, "API writes per pod start": true}},
		{"api-1k two status patches per pod", Result{Scenario: "api-1k", AllRunningSeconds: 5, CPUMsPerPod: 2, PeakRSSMB: 80, WritesPerPod: 3},
			map[string]bool{"all Running": true, "agent CPU per pod": true, "peak RSS": false, "API writes per pod start": false}},
		{"idle: lease and node status are allowed", Result{Scenario: "idle-1k", Idle: &IdleResult{CPUPercent: 0.5, Writes: 12,
			Requests: map[string]float64{"PUT leases": 6, "PATCH nodes/status": 6}}},
			map[string]bool{"idle agent CPU": true, "idle API writes beyond lease + node status": true}},
		{"idle: a status write is not", Result{Scenario: "idle-1k", Idle: &IdleResult{CPUPercent: 2, Writes: 13,
			Requests: map[string]float64{"PUT leases": 6, "PATCH nodes/status": 6, "PATCH pods/status": 1}}},
			map[string]bool{"idle agent CPU": false, "idle API writes beyond lease + node status": false}},
		{"edit p99 over 100 ms", Result{Scenario: "edit-latency", Edit: &EditResult{ToCreate: Percentiles{P99: 0.150}}},
			map[string]bool{"edit → provider CreatePod p99": false}},
		{"process-100: nothing left", Result{Scenario: "process-100", Process: &ProcessResult{}},
			map[string]bool{"no supervisor or workload left after removal": true}},
		{"process-100: a process left", Result{Scenario: "process-100", Process: &ProcessResult{Leftovers: 1}},
			map[string]bool{"no supervisor or workload left after removal": false}},
		{"unknown scenario has no goals", Result{Scenario: "other"}, map[string]bool{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, g := range goalsFor(&tt.res) {
				got[g.Name] = g.Met
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("goals = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJSONRoundTripAndCompare(t *testing.T) {
	old := &Report{Commit: "aaa", Results: []*Result{
		{Scenario: "api-1k", AllRunningSeconds: 4, PodsPerSecond: 250, PeakRSSMB: 80, WritesPerPod: 3},
		{Scenario: "only-old", AllRunningSeconds: 1},
	}}
	cur := &Report{Commit: "bbb", Results: []*Result{
		{Scenario: "api-1k", AllRunningSeconds: 2, PodsPerSecond: 500, PeakRSSMB: 82, WritesPerPod: 2, Edit: nil},
	}}
	dir := t.TempDir()
	for name, rep := range map[string]*Report{"old.json": old, "new.json": cur} {
		if err := WriteJSON(filepath.Join(dir, name), rep); err != nil {
			t.Fatal(err)
		}
	}
	o, err := ReadJSON(filepath.Join(dir, "old.json"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := ReadJSON(filepath.Join(dir, "new.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, old) {
		t.Errorf("round trip changed the report: %+v", o)
	}
	var buf bytes.Buffer
	Compare(&buf, o, n, 0.1)
	var lines []string
	for _, l := range strings.Split(buf.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{
		"api-1k all Running s 4 2 0.50x better",
		"api-1k pods/s 250 500 2.00x better",
		"api-1k peak RSS MB 80 82 1.02x ~",
		"api-1k writes/pod 3 2 0.67x better",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "api-1k all Running s") != 1 {
		t.Errorf("the one api-1k run of each report should be compared once:\n%s", out)
	}
	if strings.Contains(out, "only-old") {
		t.Errorf("a scenario missing from the new report was compared:\n%s", out)
	}
}

func TestWriteTableNamesUnmetGoals(t *testing.T) {
	r := &Result{Scenario: "api-1k", Pods: 1000, AllRunningSeconds: 9, PeakRSSMB: 80, WritesPerPod: 3, CPUMsPerPod: 1}
	r.Goals = goalsFor(r)
	var buf bytes.Buffer
	WriteTable(&buf, []*Result{r})
	if got := strings.Count(buf.String(), "NOT MET"); got != 3 {
		t.Errorf("want 3 unmet goals in the table, got %d:\n%s", got, buf.String())
	}
}

func TestCompareRepeatedScenarioPairsRunsInOrder(t *testing.T) {
	old := &Report{Results: []*Result{{Scenario: "api-1k", AllRunningSeconds: 4}, {Scenario: "api-1k", AllRunningSeconds: 8}}}
	cur := &Report{Results: []*Result{{Scenario: "api-1k", AllRunningSeconds: 2}, {Scenario: "api-1k", AllRunningSeconds: 2}}}
	var buf bytes.Buffer
	Compare(&buf, old, cur, 0.1)
	out := strings.Join(strings.Fields(buf.String()), " ")
	for _, want := range []string{"all Running s 4 2 0.50x better", "all Running s 8 2 0.25x better"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestWriteTableProcessResult(t *testing.T) {
	tests := []struct {
		name   string
		res    Result
		want   []string
		absent []string
	}{
		{"all gone", Result{Scenario: "process-100", Pods: 100, Process: &ProcessResult{AgentRSSMB: 70, Supervisors: 100, SupervisorRSSSumMB: 4464, SupervisorRSSMB: 44.6, ProcessesGoneSeconds: 1.28}},
			[]string{"100 supervisors: RSS 4464.0 MB in all, 44.60 MB median", "gone 1.28 s after", " met"}, []string{"LEFT", "FAILED", "NOT MET"}},
		{"one left", Result{Scenario: "process-100", Pods: 100, Error: "1 container processes left", Process: &ProcessResult{Leftovers: 1, LeftoverProcesses: "workload 42 (abc)"}},
			[]string{"1 container processes LEFT after removal: workload 42 (abc)", "FAILED: 1 container processes left", "NOT MET"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.res.Goals = goalsFor(&tt.res)
			var buf bytes.Buffer
			WriteTable(&buf, []*Result{&tt.res})
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("table lacks %q:\n%s", w, buf.String())
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(buf.String(), a) {
					t.Errorf("table has %q:\n%s", a, buf.String())
				}
			}
		})
	}
}

func TestWriteTableAPILatency(t *testing.T) {
	r := &Result{Scenario: "api-latency", Pods: 1000, APILatency: &APILatencyResult{
		Rounds: 200, Logs: Percentiles{N: 200, P50: 0.004, P90: 0.006, P99: 0.012}, Exec: Percentiles{N: 200, P50: 0.020, P90: 0.030, P99: 0.045},
		Seconds: 10, CPUSeconds: 0.5, CPUPercent: 5, RSSMB: 40, MaxRSSMB: 42.5}}
	r.Goals = goalsFor(r)
	var buf bytes.Buffer
	WriteTable(&buf, []*Result{r})
	for _, w := range []string{"200 round trips", "logs 4/6/12, exec echo ok 20/30/45 (p50/p90/p99 ms; 0 exec fell back to SPDY)",
		"CPU 0.50 s (5.0% of a core), RSS 40.0 MB at the end, 42.5 MB at most"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, buf.String())
		}
	}
	if strings.Contains(buf.String(), "NOT MET") {
		t.Errorf("api-latency has no goal to miss:\n%s", buf.String())
	}

	var cmp bytes.Buffer
	slower := *r
	lat := *r.APILatency
	lat.Exec.P99 = 0.090
	slower.APILatency = &lat
	Compare(&cmp, &Report{Results: []*Result{r}}, &Report{Results: []*Result{&slower}}, 0.1)
	out := strings.Join(strings.Fields(cmp.String()), " ")
	for _, w := range []string{"api-latency exec p99 ms 45 90 2.00x worse", "api-latency logs p99 ms 12 12 1.00x ~"} {
		if !strings.Contains(out, w) {
			t.Errorf("compare output lacks %q:\n%s", w, cmp.String())
		}
	}
}

func TestWriteFleet(t *testing.T) {
	var buf bytes.Buffer
	writeFleet(&buf, "agents-20", &FleetResult{Agents: 20, PodsPerAgent: 100, RestSeconds: 60, LoadSeconds: 30,
		RestPerNode:        map[string]float64{"PUT leases": 0.1, "GET nodes": 0.1},
		LoadPerNode:        map[string]float64{"PUT leases": 0.1, "PATCH pods/status": 3.3},
		RestWatchesPerNode: 4, RestCPUPercent: 1.5, LoadCPUSeconds: 12, RestRSSSumMB: 800, PeakRSSSumMB: 900})
	out := buf.String()
	for _, want := range []string{"20 agents, 100 pods each", "4.0 watches open per node",
		"CPU 1.50% of a core at rest, 12.00 s under load", "RSS 800 MB at rest, peaks summed 900 MB"} {
		assert.Contains(t, out, want)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 || len(f) == 4 && f[0] != "agents-20:" {
			rows[strings.Join(f[:len(f)-2], " ")] = f[len(f)-2:]
		}
	}
	assert.Equal(t, []string{"0.100", "0.000"}, rows["GET nodes"], "a kind seen only at rest")
	assert.Equal(t, []string{"0.000", "3.300"}, rows["PATCH pods/status"])
	assert.Equal(t, []string{"0.200", "3.400"}, rows["all"])
}

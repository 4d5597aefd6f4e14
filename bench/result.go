package bench

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is one harness run: where and when it ran and every scenario's result. It is the
// JSON file that Compare reads.
type Report struct {
	Date   string `json:"date"`
	Commit string `json:"commit"`
	// Agent is what the agent binary says of itself (`vk-static version`): the build that was
	// measured, which may differ from the working tree's commit.
	Agent     string    `json:"agent"`
	GoVersion string    `json:"goVersion"`
	CPUs      int       `json:"cpus"`
	LoadAvg   string    `json:"loadAvg,omitempty"` // /proc/loadavg at the start: other work on the machine
	Results   []*Result `json:"results"`
	// Peers are every round of every peer of a -peers run (vk-static's included), alternating
	// on the same control plane; Results keeps vk-static's last round, for Compare.
	Peers []*Result `json:"peers,omitempty"`
}

// Result is one scenario's measurements. Zero values mean "not measured by this scenario".
type Result struct {
	Scenario string `json:"scenario"`
	// Peer names the agent measured when it is not vk-static (e.g. "floor"); Round is its
	// round in a -peers run, counted from 1.
	Peer      string   `json:"peer,omitempty"`
	Round     int      `json:"round,omitempty"`
	Pods      int      `json:"pods"`
	AgentArgs []string `json:"agentArgs,omitempty"`

	AgentReadySeconds float64 `json:"agentReadySeconds"` // exec → /readyz ok and Node Ready

	// Start-up of the pods.
	AllRunningSeconds float64 `json:"allRunningSeconds,omitempty"` // first create (or manifest write) → last pod seen Running
	PodsPerSecond     float64 `json:"podsPerSecond,omitempty"`
	// AfterLastSentSeconds is the last create (or manifest write) → last pod seen Running: all
	// Running without the time the load driver took to send the pods, which moves with the
	// machine's load whichever agent runs (docs/performance.md, "CPU per write").
	AfterLastSentSeconds float64 `json:"afterLastSentSeconds,omitempty"`
	// NeverRunning pods were still not Running when no pod had changed state for 30 s (an
	// agent bug: the mock provider runs every pod at once); NeverRunningPods shows a few.
	NeverRunning     int         `json:"neverRunning,omitempty"`
	NeverRunningPods string      `json:"neverRunningPods,omitempty"`
	StartLatency     Percentiles `json:"startLatency"` // create sent → Running seen on the watch
	// ReadyLatency is kube-burner's podReadyLatency: Ready condition lastTransitionTime minus
	// creationTimestamp (both second precision).
	ReadyLatency Percentiles `json:"readyLatency"`

	DeleteSeconds float64 `json:"deleteSeconds,omitempty"` // first delete → last pod gone from the API

	// Agent cost, from /proc.
	StartCPUSeconds  float64 `json:"startCPUSeconds,omitempty"` // during start-up of the pods (until settled)
	CPUMsPerPod      float64 `json:"cpuMsPerPod,omitempty"`
	DeleteCPUSeconds float64 `json:"deleteCPUSeconds,omitempty"`
	PeakRSSMB        float64 `json:"peakRSSMB"`
	// PeakAnonMB and PeakFileMB are the largest private (RssAnon: heap, stacks, runtime) and
	// file-backed (RssFile: the binary's pages) parts of the resident set in samples every
	// 50 ms; their sum can be under PeakRSSMB, as they need not peak in the same sample.
	PeakAnonMB float64 `json:"peakAnonMB,omitempty"`
	PeakFileMB float64 `json:"peakFileMB,omitempty"`

	// The control plane's cost (etcd + the API server, from /proc) in the same phases,
	// for the load driver's requests and the agent's together.
	StartControlPlaneCPUSeconds  float64 `json:"startControlPlaneCPUSeconds,omitempty"`
	DeleteControlPlaneCPUSeconds float64 `json:"deleteControlPlaneCPUSeconds,omitempty"`

	// API requests the agent made while its pods started (server counters minus the driver).
	StartRequests     map[string]float64 `json:"startRequests,omitempty"`
	StartNodeRequests float64            `json:"startNodeRequests,omitempty"` // exact: flow schemas of system:nodes
	// WritesPerPod counts the agent's writes to pods, pods/status and events per pod started
	// (lease and node-status writes are per interval, not per pod).
	WritesPerPod   float64            `json:"writesPerPod,omitempty"`
	DeleteRequests map[string]float64 `json:"deleteRequests,omitempty"`
	// StartWatchesClosed and DeleteWatchesClosed count, by "WATCH resource", the agent's
	// watches the API server closed in the phase because they did not take events fast
	// enough (apiserver_terminated_watchers_total less the driver's). The agent opens each
	// again from where it was: these are part of the phase's WATCH requests, which the
	// server counts when a watch ends.
	StartWatchesClosed  map[string]float64 `json:"startWatchesClosed,omitempty"`
	DeleteWatchesClosed map[string]float64 `json:"deleteWatchesClosed,omitempty"`

	// QueueStats are the agent's own work-queue counters at the end of the start phase, by
	// queue (sync, status): how many items and their mean duration. Status writes are one
	// API round trip each, so workers ÷ mean is the most status patches a second the agent
	// can make.
	QueueStats map[string]QueueStat `json:"queueStats,omitempty"`

	Idle    *IdleResult    `json:"idle,omitempty"`
	Edit    *EditResult    `json:"edit,omitempty"`
	Process *ProcessResult `json:"process,omitempty"`
	CRI     *CRIResult     `json:"cri,omitempty"`
	Fleet   *FleetResult   `json:"fleet,omitempty"`
	// APILatency is api-latency's: kubelet API round trips through the API server.
	APILatency *APILatencyResult `json:"apiLatency,omitempty"`

	// Error is why the scenario failed after it had measured something (process-100: container
	// processes left after their pods were removed); the numbers above are still what was seen.
	Error string `json:"error,omitempty"`

	Profiles []string `json:"profiles,omitempty"`
	Goals    []Goal   `json:"goals,omitempty"`
}

// QueueStat summarises one of the agent's work queues.
type QueueStat struct {
	Items  float64 `json:"items"`
	MeanMs float64 `json:"meanMs"`
}

// IdleResult is the agent's cost while nothing changes.
type IdleResult struct {
	Seconds      float64            `json:"seconds"`
	CPUSeconds   float64            `json:"cpuSeconds"`
	CPUPercent   float64            `json:"cpuPercent"` // of one core
	Requests     map[string]float64 `json:"requests"`
	NodeRequests float64            `json:"nodeRequests"`
	Writes       float64            `json:"writes"`
	// WatchesClosed: see Result.StartWatchesClosed.
	WatchesClosed map[string]float64 `json:"watchesClosed,omitempty"`
	// Syncs are the pods the agent synced in the window, by queue (sync, status): the periodic
	// resync's work, which the CPU figure includes.
	Syncs map[string]float64 `json:"syncs,omitempty"`
}

// EditResult is how fast manifest edits take effect.
type EditResult struct {
	Edits int `json:"edits"`
	// ToDelete: edit → the old pod's DeletePod seen in the agent's provider-call counter (the
	// agent noticed). ToCreate: edit → the new pod's CreatePod. ToMirror: edit → the new
	// mirror pod seen Running in the API.
	ToDelete Percentiles `json:"toDelete"`
	ToCreate Percentiles `json:"toCreate"`
	ToMirror Percentiles `json:"toMirror"`
	// PollInterval is the resolution of ToDelete and ToCreate.
	PollIntervalMs float64 `json:"pollIntervalMs"`
}

// ProcessResult is what the containers of the process provider cost while they run, and
// whether they all end when their pods are removed.
type ProcessResult struct {
	// While the pods run (the quiet window's end): the agent's resident set and every
	// container's supervisor's (VmRSS), and the workloads' (sleep) for scale. VmRSS counts the
	// page-cache pages of the binary that all supervisors share, so the sum overstates what
	// they take together: SupervisorAnon (RssAnon, private) and SupervisorPssSumMB (Pss, shared
	// pages divided among their users) say that.
	AgentRSSMB          float64 `json:"agentRSSMB"`
	Supervisors         int     `json:"supervisors"`
	SupervisorRSSSumMB  float64 `json:"supervisorRSSSumMB"`
	SupervisorRSSMB     float64 `json:"supervisorRSSMB"` // median per container
	SupervisorRSSMaxMB  float64 `json:"supervisorRSSMaxMB"`
	SupervisorAnonSumMB float64 `json:"supervisorAnonSumMB"`
	SupervisorAnonMB    float64 `json:"supervisorAnonMB"` // median per container
	SupervisorPssSumMB  float64 `json:"supervisorPssSumMB"`
	// SupervisorCPUSeconds is the CPU time all supervisors spent from their start to the quiet
	// window's end (the agent's CPU figures do not include it); SupervisorQuietCPUPercent is
	// theirs in the quiet window, in all, in % of a core.
	SupervisorCPUSeconds      float64 `json:"supervisorCPUSeconds"`
	SupervisorQuietCPUPercent float64 `json:"supervisorQuietCPUPercent"`
	Workloads                 int     `json:"workloads"`
	WorkloadRSSSumMB          float64 `json:"workloadRSSSumMB"`
	// ProviderCalls are the agent's provider calls by name (CreatePod: a pod's sandbox and
	// container started, supervisor included; DeletePod: stopped and removed), from its own
	// vk_static_provider_call_duration_seconds, at the end of the scenario.
	ProviderCalls map[string]QueueStat `json:"providerCalls,omitempty"`
	// ProcessesGoneSeconds: first manifest removed → no supervisor or workload left (polled
	// every 100 ms). Leftovers are the processes still there when the harness stopped waiting.
	ProcessesGoneSeconds float64 `json:"processesGoneSeconds,omitempty"`
	Leftovers            int     `json:"leftovers,omitempty"`
	LeftoverProcesses    string  `json:"leftoverProcesses,omitempty"`
}

// APILatencyResult is how long `kubectl logs` and `kubectl exec` take through the API server
// to the agent's kubelet API while it serves its pods, and what the agent spends meanwhile.
type APILatencyResult struct {
	// Rounds is how many logs and exec round trips each were made, one after another.
	Rounds int `json:"rounds"`
	// Logs: GET pods/log (the whole response read). Exec: a new executor, `echo ok` through
	// pods/exec, the streams closed and "ok" read — as one `kubectl exec` does.
	Logs Percentiles `json:"logs"`
	Exec Percentiles `json:"exec"`
	// ExecFallbacks counts exec round trips whose WebSocket upgrade was refused and that went
	// over SPDY instead (kubectl's fallback).
	ExecFallbacks int `json:"execFallbacks"`
	// The agent during the round trips: CPU (from /proc) and its resident set at the end and
	// the largest seen (sampled every 100 ms).
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	CPUPercent float64 `json:"cpuPercent"` // of one core
	RSSMB      float64 `json:"rssMB"`
	MaxRSSMB   float64 `json:"maxRSSMB"`
}

// Goal is one issue-6 target beside its measured value.
type Goal struct {
	Name     string  `json:"name"`
	Target   string  `json:"target"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Met      bool    `json:"met"`
}

func goal(name, unit string, value, limit float64) Goal {
	return Goal{Name: name, Target: fmt.Sprintf("≤ %g %s", limit, unit), Measured: fmt.Sprintf("%.3g %s", value, unit), Value: value, Met: value <= limit}
}

// goalsFor compares a result with the goals of issue 6 that its scenario measures.
func goalsFor(r *Result) []Goal {
	var g []Goal
	if r.NeverRunning > 0 {
		g = append(g, Goal{Name: "every pod Running", Target: fmt.Sprint(r.Pods), Measured: fmt.Sprint(r.Pods - r.NeverRunning), Value: float64(r.Pods - r.NeverRunning)})
	}
	switch r.Scenario {
	case "api-1k":
		g = append(g,
			goal("all Running", "s", r.AllRunningSeconds, 5.5),
			goal("agent CPU per pod", "ms", r.CPUMsPerPod, 3),
			goal("peak RSS", "MB", r.PeakRSSMB, 50), // issue 28 (issue 14: 60)
			goal("API writes per pod start", "", r.WritesPerPod, 2))
	case "api-10k":
		g = append(g,
			goal("all Running", "s", r.AllRunningSeconds, 45),
			goal("deleted", "s", r.DeleteSeconds, 60),
			goal("peak RSS", "MB", r.PeakRSSMB, 200))
	case "static-1k":
		g = append(g, goal("every mirror Running", "s", r.AllRunningSeconds, 15))
	case "edit-latency":
		if r.Edit != nil {
			g = append(g, goal("edit → provider CreatePod p99", "ms", r.Edit.ToCreate.P99*1000, 100))
		}
	case "idle-1k":
		if r.Idle != nil {
			g = append(g, goal("idle agent CPU", "% of a core", r.Idle.CPUPercent, 1))
			// Lease renewals and node-status patches are allowed: one each per interval.
			extra := r.Idle.Writes - r.Idle.Requests["PUT leases"] - r.Idle.Requests["PATCH nodes/status"]
			g = append(g, goal("idle API writes beyond lease + node status", "", extra, 0))
		}
	case "process-100":
		if r.Process != nil {
			g = append(g, Goal{Name: "no supervisor or workload left after removal", Target: "0",
				Measured: fmt.Sprint(r.Process.Leftovers), Value: float64(r.Process.Leftovers), Met: r.Process.Leftovers == 0})
		}
	}
	if r.NeverRunning > 0 {
		for i := range g {
			if strings.HasPrefix(g[i].Name, "all Running") || strings.HasPrefix(g[i].Name, "every mirror Running") {
				g[i].Met = false
				g[i].Measured += fmt.Sprintf(" (%d never Running)", r.NeverRunning)
			}
		}
	}
	return g
}

// WriteJSON writes the report to path.
func WriteJSON(path string, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadJSON reads a report written by WriteJSON; a run whose numbers show it failed is marked
// failed even if the file does not say so.
func ReadJSON(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// A file written before failed runs were marked holds them unmarked: judge them the way a
	// run is judged now, so that Compare does not take one for a measurement.
	for _, r := range slices.Concat(rep.Results, rep.Peers) {
		markFailed(r, nil)
	}
	return &rep, nil
}

// WriteTable prints one line per scenario and then each goal beside its measured value.
func WriteTable(w io.Writer, results []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpods\tnever Running\tall Running s\tpods/s\tstart p50/p90/p99 s\tready p50/p99 s\tdelete s\tCPU s\tCPU ms/pod\tpeak RSS MB\twrites/pod\t")
	for _, r := range results {
		name := r.Scenario
		if r.Failed() {
			name += " (FAILED)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t\n", name, r.Pods, r.NeverRunning,
			num(r.AllRunningSeconds, 2), num(r.PodsPerSecond, 0),
			triple(r.StartLatency), pair(r.ReadyLatency), num(r.DeleteSeconds, 2),
			num(r.StartCPUSeconds, 2), num(r.CPUMsPerPod, 2), r.PeakRSSMB, num(r.WritesPerPod, 2))
	}
	tw.Flush()
	for _, r := range results {
		if r.Edit != nil {
			fmt.Fprintf(w, "\n%s: %d edits; edit→DeletePod %s, edit→CreatePod %s, edit→mirror Running %s (p50/p90/p99 ms, poll %.0f ms)\n",
				r.Scenario, r.Edit.Edits, tripleMs(r.Edit.ToDelete), tripleMs(r.Edit.ToCreate), tripleMs(r.Edit.ToMirror), r.Edit.PollIntervalMs)
		}
		if l := r.APILatency; l != nil {
			fmt.Fprintf(w, "\n%s: %d round trips through the API server, one at a time: logs %s, exec echo ok %s (p50/p90/p99 ms; %d exec fell back to SPDY); in %.1f s the agent's CPU %.2f s (%.1f%% of a core), RSS %.1f MB at the end, %.1f MB at most\n",
				r.Scenario, l.Rounds, tripleMs(l.Logs), tripleMs(l.Exec), l.ExecFallbacks, l.Seconds, l.CPUSeconds, l.CPUPercent, l.RSSMB, l.MaxRSSMB)
		}
		if r.Idle != nil {
			fmt.Fprintf(w, "\n%s: idle %.0f s: CPU %.2f s (%.2f%% of a core); pods synced %.0f, statuses checked %.0f; agent requests %.0f: %s\n",
				r.Scenario, r.Idle.Seconds, r.Idle.CPUSeconds, r.Idle.CPUPercent, r.Idle.Syncs["sync"], r.Idle.Syncs["status"],
				r.Idle.NodeRequests, requestCounts(r.Idle.Requests))
		}
		writeCRI(w, r)
		if p := r.Process; p != nil {
			fmt.Fprintf(w, "\n%s: while running: agent RSS %.1f MB; %d supervisors: RSS %.1f MB in all, %.2f MB median (max %.2f), of it private (RssAnon) %.1f MB in all, %.2f MB median; Pss %.1f MB in all; %d workloads, RSS %.1f MB in all\n",
				r.Scenario, p.AgentRSSMB, p.Supervisors, p.SupervisorRSSSumMB, p.SupervisorRSSMB, p.SupervisorRSSMaxMB,
				p.SupervisorAnonSumMB, p.SupervisorAnonMB, p.SupervisorPssSumMB, p.Workloads, p.WorkloadRSSSumMB)
			fmt.Fprintf(w, "%s: supervisors' CPU: %.2f s in all since they started, %.2f%% of a core in all during the quiet window\n",
				r.Scenario, p.SupervisorCPUSeconds, p.SupervisorQuietCPUPercent)
			if len(p.ProviderCalls) > 0 {
				var parts []string
				for _, c := range slices.Sorted(maps.Keys(p.ProviderCalls)) {
					parts = append(parts, fmt.Sprintf("%s %.0f calls, mean %.2f ms", c, p.ProviderCalls[c].Items, p.ProviderCalls[c].MeanMs))
				}
				fmt.Fprintf(w, "%s: provider calls: %s\n", r.Scenario, strings.Join(parts, "; "))
			}
			if p.Leftovers > 0 {
				fmt.Fprintf(w, "%s: %d container processes LEFT after removal: %s\n", r.Scenario, p.Leftovers, p.LeftoverProcesses)
			} else if p.ProcessesGoneSeconds > 0 {
				fmt.Fprintf(w, "%s: every supervisor and workload gone %.2f s after the first manifest was removed\n", r.Scenario, p.ProcessesGoneSeconds)
			}
		}
		if f := r.Fleet; f != nil {
			writeFleet(w, r.Scenario, f)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "\n%s: FAILED: %s\n", r.Scenario, r.Error)
		}
		if len(r.QueueStats) > 0 {
			var parts []string
			for _, q := range []string{"sync", "status"} {
				if st, ok := r.QueueStats[q]; ok {
					parts = append(parts, fmt.Sprintf("%s %.0f items, mean %.1f ms", q, st.Items, st.MeanMs))
				}
			}
			fmt.Fprintf(w, "\n%s: agent queues: %s\n", r.Scenario, strings.Join(parts, "; "))
		}
		if len(r.StartRequests) > 0 {
			fmt.Fprintf(w, "\n%s: agent requests while pods started (%.0f from node identities): %s\n",
				r.Scenario, r.StartNodeRequests, requestCounts(r.StartRequests))
		}
		if len(r.DeleteRequests) > 0 {
			fmt.Fprintf(w, "%s: agent requests while pods were deleted: %s\n", r.Scenario, requestCounts(r.DeleteRequests))
		}
		if len(r.StartWatchesClosed) > 0 || len(r.DeleteWatchesClosed) > 0 {
			fmt.Fprintf(w, "%s: of those WATCHes, the API server closed as too slow (re-opened by the agent): start %s, delete %s\n",
				r.Scenario, cmp.Or(requestCounts(r.StartWatchesClosed).String(), "none"), cmp.Or(requestCounts(r.DeleteWatchesClosed).String(), "none"))
		}
	}
	fmt.Fprintln(w, "\ngoals:")
	for _, r := range results {
		writeGoals(w, r.Scenario, r.Goals)
	}
}

func num(v float64, prec int) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func triple(p Percentiles) string {
	if p.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f/%.2f/%.2f", p.P50, p.P90, p.P99)
}

func pair(p Percentiles) string {
	if p.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f", p.P50, p.P99)
}

func tripleMs(p Percentiles) string {
	if p.N == 0 {
		return "-"
	}
	return strings.Join([]string{fmt.Sprintf("%.0f", p.P50*1000), fmt.Sprintf("%.0f", p.P90*1000), fmt.Sprintf("%.0f", p.P99*1000)}, "/")
}

// writeFleet prints what each of a fleet's agents costs the API server, at rest and under
// load, request kind by request kind, and what the agents cost together.
func writeFleet(w io.Writer, scenario string, f *FleetResult) {
	fmt.Fprintf(w, "\n%s: %d agents, %d pods each; API requests/s per node (at rest %.0f s, under load %.0f s); %.1f watches open per node at rest\n",
		scenario, f.Agents, f.PodsPerAgent, f.RestSeconds, f.LoadSeconds, f.RestWatchesPerNode)
	keys := slices.Sorted(maps.Keys(f.LoadPerNode))
	for k := range f.RestPerNode {
		if _, ok := f.LoadPerNode[k]; !ok {
			keys = append(keys, k)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "request\tat rest\tunder load\t")
	var rest, load float64
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t\n", k, f.RestPerNode[k], f.LoadPerNode[k])
		rest += f.RestPerNode[k]
		load += f.LoadPerNode[k]
	}
	fmt.Fprintf(tw, "all\t%.3f\t%.3f\t\n", rest, load)
	tw.Flush()
	fmt.Fprintf(w, "%s: all agents together: CPU %.2f%% of a core at rest, %.2f s under load; RSS %.0f MB at rest, peaks summed %.0f MB\n",
		scenario, f.RestCPUPercent, f.LoadCPUSeconds, f.RestRSSSumMB, f.PeakRSSSumMB)
}

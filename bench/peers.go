package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Peer names. PeerVKStatic is the agent under test; the others are measured beside it.
const (
	PeerVKStatic = "vk-static"
	PeerFloor    = "floor"
	PeerKWOK     = "kwok"
	// PeerKubelet is the kubelet itself (bench/kubelet), in cri-50 only: it needs a runtime,
	// and a node address other than loopback (vkbench -peers kubelet runs in a network
	// namespace of its own).
	PeerKubelet = "kubelet"
	// PeerCRIFloor is the least work any agent must do on CRI (bench/floor's CRIAgent, started
	// through bench/cmd/crifloor), in cri-50 only.
	PeerCRIFloor = "crifloor"
	// PeerBaseline is another build of vk-static (vkbench -baseline), run with vk-static's
	// flags in every scenario that has peers: a change is measured against the build before
	// it in one run, on one control plane, as the machines here are too noisy for two runs.
	PeerBaseline = "baseline"
)

// Peer is an agent a scenario runs against: Binary takes vk-static's node flags as
// test/support/agentproc passes them, the scenario's (e.g. cri-50's runtime endpoint), then Args,
// and serves ReadyPath on --healthz-port.
type Peer struct {
	Name   string
	Binary string   // empty for vk-static: Runner.AgentBinary
	Args   []string // the peer's own flags (vk-static's come from Runner.AgentArgs)
	// ReadyPath is polled until it answers 200 before the Node's Ready condition; empty means
	// /readyz (the kubelet serves /healthz only).
	ReadyPath string
}

// isVKStatic says whether p is a build of vk-static (the one under test or the baseline): it
// takes vk-static's own flags (Runner.AgentArgs) and runs wherever vk-static does.
func (p Peer) isVKStatic() bool { return p.Name == PeerVKStatic || p.Name == PeerBaseline }

// runsIn says whether RunPeers runs p in sc: a build of vk-static always, another peer where sc
// names it.
func (p Peer) runsIn(sc Scenario) bool { return p.isVKStatic() || slices.Contains(sc.Peers, p.Name) }

// RunPeers runs sc rounds times against each peer in turn that sc applies to (vk-static, the
// floor, KWOK, vk-static, …) on the same control plane, each run with a fresh node name and
// namespace, and returns every run's result in that order with Round set. A failed run's
// result is kept, marked failed (Result.Error); the errors are joined.
func (r *Runner) RunPeers(ctx context.Context, sc Scenario, peers []Peer, rounds int) ([]*Result, error) {
	var out []*Result
	var errs []error
	for round := 1; round <= max(rounds, 1); round++ {
		for _, p := range peers {
			if !p.runsIn(sc) {
				continue
			}
			res, err := r.RunAs(ctx, sc, p)
			if res != nil {
				res.Round = round
				out = append(out, res)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s round %d: %w", p.Name, round, err))
				if ctx.Err() != nil {
					return out, errors.Join(errs...)
				}
			}
		}
	}
	return out, errors.Join(errs...)
}

// peerName is the peer a result measured.
func peerName(r *Result) string {
	if r.Peer == "" {
		return PeerVKStatic
	}
	return r.Peer
}

// peerMetric is one row of the side-by-side table; lower is better for all.
type peerMetric struct {
	name string
	get  func(*Result) float64
}

func peerMetrics() []peerMetric {
	return []peerMetric{
		{"all Running s", allRunning},
		{"Running after last create s", func(r *Result) float64 { return r.AfterLastSentSeconds }},
		{"start p99 s", startP99},
		{"agent CPU s", agentCPU},
		{"CPU ms/pod write", cpuPerWrite},
		{"peak RSS MB", peakRSS},
		{"peak RssAnon MB", func(r *Result) float64 { return r.PeakAnonMB }},
		{"peak RssFile MB", func(r *Result) float64 { return r.PeakFileMB }},
		{"all deleted s", deleted},
		{"control plane CPU s (start)", func(r *Result) float64 { return r.StartControlPlaneCPUSeconds }},
		{"control plane CPU s (delete)", func(r *Result) float64 { return r.DeleteControlPlaneCPUSeconds }},
		{"writes/pod (start)", func(r *Result) float64 { return r.WritesPerPod }},
	}
}

func allRunning(r *Result) float64 { return r.AllRunningSeconds }
func startP99(r *Result) float64   { return r.StartLatency.P99 }
func agentCPU(r *Result) float64   { return r.StartCPUSeconds + r.DeleteCPUSeconds }
func peakRSS(r *Result) float64    { return r.PeakRSSMB }
func deleted(r *Result) float64    { return r.DeleteSeconds }

// cpuPerWrite is the agent's CPU (start + delete) per write of a pod or event (issue 28: the
// agent makes the kubelet's writes, twice the floor's, so its CPU is compared per write); 0
// when no writes were counted.
func cpuPerWrite(r *Result) float64 {
	writes := requestCounts(r.StartRequests).podWrites() + requestCounts(r.DeleteRequests).podWrites()
	if writes == 0 {
		return 0
	}
	return agentCPU(r) * 1000 / writes
}

// peerRuns are one scenario's results by peer, each peer's in round order.
type peerRuns map[string][]*Result

// groupPeerRuns splits results by scenario (in the order first seen) and peer.
func groupPeerRuns(results []*Result) ([]string, map[string]peerRuns) {
	var scenarios []string
	by := map[string]peerRuns{}
	for _, r := range results {
		if by[r.Scenario] == nil {
			by[r.Scenario] = peerRuns{}
			scenarios = append(scenarios, r.Scenario)
		}
		by[r.Scenario][peerName(r)] = append(by[r.Scenario][peerName(r)], r)
	}
	return scenarios, by
}

// median of one metric over a peer's good rounds; 0 when the peer has none. A failed run is
// left out (its numbers are of a run that did not do the work), and so is a round that did not
// measure the metric (0): either would pull the median towards zero.
func (pr peerRuns) median(peer string, get func(*Result) float64) float64 {
	var v []float64
	for _, r := range pr[peer] {
		if x := get(r); !r.Failed() && x != 0 {
			v = append(v, x)
		}
	}
	return median(v)
}

// good are peer's runs that did not fail.
func (pr peerRuns) good(peer string) []*Result {
	var out []*Result
	for _, r := range pr[peer] {
		if !r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// roundRatios are vk-static's value of a metric over peer's in the same round, by round, for
// the rounds in which neither failed.
func (pr peerRuns) roundRatios(peer string, get func(*Result) float64) []float64 {
	var out []float64
	for _, vk := range pr.good(PeerVKStatic) {
		for _, p := range pr.good(peer) {
			if p.Round == vk.Round && get(p) > 0 && get(vk) > 0 {
				out = append(out, get(vk)/get(p))
			}
		}
	}
	return out
}

// WritePeerTable prints, per scenario in results, each peer's medians over its rounds side by
// side, in the order peers are given, vk-static's ratio to each other peer, every round's all
// Running, and the goals of issue 14 that the scenario measures.
func WritePeerTable(w io.Writer, results []*Result, peers []string) {
	scenarios, byScenario := groupPeerRuns(results)
	for _, sc := range scenarios {
		runs := byScenario[sc]
		var present []string
		for _, p := range peers {
			if len(runs[p]) > 0 {
				present = append(present, p)
			}
		}
		failed := failedRuns(slices.Concat(slices.Collect(maps.Values(runs))...))
		fmt.Fprintf(w, "\n%s: medians of %d round(s), alternating on one control plane", sc, len(runs.good(PeerVKStatic)))
		if len(failed) > 0 {
			fmt.Fprintf(w, "; %d FAILED run(s) left out", len(failed))
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "\t")
		for _, p := range present {
			fmt.Fprintf(tw, "%s\t", p)
		}
		for _, p := range present {
			if p != PeerVKStatic {
				fmt.Fprintf(tw, "vk-static / %s\t", p)
			}
		}
		fmt.Fprintln(tw)
		for _, m := range peerMetricsOf(runs) {
			fmt.Fprintf(tw, "%s\t", m.name)
			for _, p := range present {
				fmt.Fprintf(tw, "%s\t", num(runs.median(p, m.get), 2))
			}
			for _, p := range present {
				if p != PeerVKStatic {
					fmt.Fprintf(tw, "%s\t", ratio(runs.median(PeerVKStatic, m.get), runs.median(p, m.get)))
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		writePeerCRICalls(w, runs, present)
		for _, p := range present {
			var rounds []string
			for _, r := range runs[p] {
				if r.Failed() {
					rounds = append(rounds, "FAILED")
				} else {
					rounds = append(rounds, num(r.AllRunningSeconds, 2))
				}
			}
			fmt.Fprintf(w, "all Running by round, %s: %s s\n", p, strings.Join(rounds, ", "))
		}
		for _, p := range present {
			_ = WriteFailures(w, runs[p])
		}
		if goals := peerGoals(sc, runs); len(goals) > 0 {
			fmt.Fprintln(w, "goals (issues 14 and 28):")
			writeGoals(w, sc, goals)
		}
	}
}

// peerGoals are the goals that sc's side-by-side runs measure — issue 14's, tightened where
// issue 28 tightened them (agent CPU, per write, peak RSS, all deleted); a goal whose peer did
// not run is left out.
func peerGoals(sc string, runs peerRuns) []Goal {
	var g []Goal
	// relative compares vk-static's median with limit × peer's.
	relative := func(name, peer string, get func(*Result) float64, limit float64) {
		vk, p := runs.median(PeerVKStatic, get), runs.median(peer, get)
		if vk == 0 || p == 0 {
			return
		}
		g = append(g, Goal{Name: name, Target: fmt.Sprintf("≤ %.2f× %s", limit, peer),
			Measured: fmt.Sprintf("%.2f× (%.3g vs %.3g)", vk/p, vk, p), Value: vk / p, Met: vk/p <= limit})
	}
	// everyRound compares vk-static's value with limit × peer's in each round.
	// A round in which vk-static failed is a round in which the goal was not met.
	everyRound := func(name, peer string, get func(*Result) float64, limit float64) {
		ratios := runs.roundRatios(peer, get)
		if len(ratios) == 0 {
			return
		}
		var parts []string
		for _, r := range ratios {
			parts = append(parts, fmt.Sprintf("%.2f×", r))
		}
		for _, r := range failedRuns(runs[PeerVKStatic]) {
			parts = append(parts, fmt.Sprintf("(round %d FAILED)", r.Round))
		}
		worst := slices.Max(ratios)
		g = append(g, Goal{Name: name, Target: fmt.Sprintf("≤ %.2f× %s in every round", limit, peer),
			Measured: "rounds " + strings.Join(parts, " "), Value: worst,
			Met: worst <= limit && len(failedRuns(runs[PeerVKStatic])) == 0})
	}
	absolute := func(name, unit string, get func(*Result) float64, limit float64) {
		if v := runs.median(PeerVKStatic, get); v > 0 {
			g = append(g, goal(name+" (median)", unit, v, limit))
		}
	}
	switch sc {
	case "api-1k":
		everyRound("all Running", PeerFloor, allRunning, 1.0)
		everyRound("all Running", PeerKWOK, allRunning, 0.85)
		relative("start p99", PeerFloor, startP99, 1.0)
		relative("agent CPU per write", PeerFloor, cpuPerWrite, 0.8)
		absolute("peak RSS", "MB", peakRSS, 50)
		relative("all deleted", PeerFloor, deleted, 1.5)
	case "api-10k":
		relative("all Running", PeerFloor, allRunning, 1.1)
		absolute("peak RSS", "MB", peakRSS, 200)
	}
	return g
}

// writeGoals prints goals as WriteTable does.
func writeGoals(w io.Writer, scenario string, goals []Goal) {
	gw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range goals {
		verdict := "met"
		if !g.Met {
			verdict = "NOT MET"
		}
		fmt.Fprintf(gw, "  %s\t%s\t%s\tmeasured %s\t%s\n", scenario, g.Name, g.Target, g.Measured, verdict)
	}
	gw.Flush()
}

// ratio is a/b as "1.23×", or "-" when either is not measured.
func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

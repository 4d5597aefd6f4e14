package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
)

// Peer names. PeerVKStatic is the agent under test; the others are measured beside it.
const (
	PeerVKStatic = "vk-static"
	PeerFloor    = "floor"
)

// Peer is an agent a scenario runs against: Binary takes vk-static's node flags as
// internal/agentproc passes them and serves /readyz on --healthz-port.
type Peer struct {
	Name   string
	Binary string // empty for vk-static: Runner.AgentBinary
}

// RunPeers runs sc rounds times against each peer in turn (vk-static, the floor, vk-static,
// …) on the same control plane, each run with a fresh node name and namespace, and returns
// every run's result in that order with Round set. A failed run's result, if it measured
// anything, is kept; the errors are joined.
func (r *Runner) RunPeers(ctx context.Context, sc Scenario, peers []Peer, rounds int) ([]*Result, error) {
	var out []*Result
	var errs []error
	for round := 1; round <= max(rounds, 1); round++ {
		for _, p := range peers {
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
		{"all Running s", func(r *Result) float64 { return r.AllRunningSeconds }},
		{"start p99 s", func(r *Result) float64 { return r.StartLatency.P99 }},
		{"agent CPU s", func(r *Result) float64 { return r.StartCPUSeconds + r.DeleteCPUSeconds }},
		{"peak RSS MB", func(r *Result) float64 { return r.PeakRSSMB }},
		{"all deleted s", func(r *Result) float64 { return r.DeleteSeconds }},
	}
}

// WritePeerTable prints, per scenario in results, each peer's medians over its rounds side by
// side, in the order peers are given, and vk-static's ratio to each other peer.
func WritePeerTable(w io.Writer, results []*Result, peers []string) {
	var scenarios []string
	byScenario := map[string]map[string][]*Result{}
	for _, r := range results {
		if byScenario[r.Scenario] == nil {
			byScenario[r.Scenario] = map[string][]*Result{}
			scenarios = append(scenarios, r.Scenario)
		}
		byScenario[r.Scenario][peerName(r)] = append(byScenario[r.Scenario][peerName(r)], r)
	}
	for _, sc := range scenarios {
		runs := byScenario[sc]
		var present []string
		for _, p := range peers {
			if len(runs[p]) > 0 {
				present = append(present, p)
			}
		}
		fmt.Fprintf(w, "\n%s: medians of %d round(s), alternating on one control plane\n", sc, len(runs[PeerVKStatic]))
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
		for _, m := range peerMetrics() {
			med := map[string]float64{}
			fmt.Fprintf(tw, "%s\t", m.name)
			for _, p := range present {
				var v []float64
				for _, r := range runs[p] {
					v = append(v, m.get(r))
				}
				med[p] = median(v)
				fmt.Fprintf(tw, "%s\t", num(med[p], 2))
			}
			for _, p := range present {
				if p != PeerVKStatic {
					fmt.Fprintf(tw, "%s\t", ratio(med[PeerVKStatic], med[p]))
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		for _, p := range present {
			for _, r := range runs[p] {
				if r.NeverRunning > 0 || r.Error != "" {
					fmt.Fprintf(w, "%s round %d: %d never Running %s\n", p, r.Round, r.NeverRunning, r.Error)
				}
			}
		}
	}
}

// ratio is a/b as "1.23×", or "-" when either is not measured.
func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

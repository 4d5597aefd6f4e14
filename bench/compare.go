package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// comparedMetric is one number Compare puts side by side; lower is better for all of them
// except pods/s.
type comparedMetric struct {
	name         string
	higherBetter bool
	get          func(*Result) float64
}

// comparedMetrics is a function, not a package variable, so that nothing can change the table.
func comparedMetrics() []comparedMetric {
	return []comparedMetric{
		{"all Running s", false, func(r *Result) float64 { return r.AllRunningSeconds }},
		{"pods/s", true, func(r *Result) float64 { return r.PodsPerSecond }},
		{"start p50 s", false, func(r *Result) float64 { return r.StartLatency.P50 }},
		{"start p99 s", false, func(r *Result) float64 { return r.StartLatency.P99 }},
		{"delete s", false, func(r *Result) float64 { return r.DeleteSeconds }},
		{"CPU ms/pod", false, func(r *Result) float64 { return r.CPUMsPerPod }},
		{"delete CPU s", false, func(r *Result) float64 { return r.DeleteCPUSeconds }},
		{"peak RSS MB", false, func(r *Result) float64 { return r.PeakRSSMB }},
		{"writes/pod", false, func(r *Result) float64 { return r.WritesPerPod }},
		{"idle CPU %", false, func(r *Result) float64 {
			if r.Idle == nil {
				return 0
			}
			return r.Idle.CPUPercent
		}},
		{"idle writes", false, func(r *Result) float64 {
			if r.Idle == nil {
				return 0
			}
			return r.Idle.Writes
		}},
		{"edit→create p99 ms", false, func(r *Result) float64 {
			if r.Edit == nil {
				return 0
			}
			return r.Edit.ToCreate.P99 * 1000
		}},
		{"edit→mirror p99 ms", false, func(r *Result) float64 {
			if r.Edit == nil {
				return 0
			}
			return r.Edit.ToMirror.P99 * 1000
		}},
		{"logs p99 ms", false, func(r *Result) float64 {
			if r.APILatency == nil {
				return 0
			}
			return r.APILatency.Logs.P99 * 1000
		}},
		{"exec p99 ms", false, func(r *Result) float64 {
			if r.APILatency == nil {
				return 0
			}
			return r.APILatency.Exec.P99 * 1000
		}},
		{"API-latency CPU %", false, func(r *Result) float64 {
			if r.APILatency == nil {
				return 0
			}
			return r.APILatency.CPUPercent
		}},
	}
}

// Compare prints, for every scenario in both reports, each metric measured in both with the
// ratio new/old and whether it got better or worse. Differences under threshold (e.g. 0.1 for
// 10 %) are reported as "~": this machine is shared and noisy.
func Compare(w io.Writer, old, cur *Report, threshold float64) {
	fmt.Fprintf(w, "old: %s (%s)\nnew: %s (%s)\n\n", old.Commit, old.Date, cur.Commit, cur.Date)
	// A scenario may run more than once in a report: pair the n-th run with the n-th.
	type runKey struct {
		scenario string
		n        int
	}
	byName := map[runKey]*Result{}
	seen := map[string]int{}
	for _, r := range old.Results {
		byName[runKey{r.Scenario, seen[r.Scenario]}] = r
		seen[r.Scenario]++
	}
	clear(seen)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmetric\told\tnew\tnew/old\t")
	for _, n := range cur.Results {
		o, ok := byName[runKey{n.Scenario, seen[n.Scenario]}]
		seen[n.Scenario]++
		if !ok {
			continue
		}
		for _, m := range comparedMetrics() {
			ov, nv := m.get(o), m.get(n)
			if ov == 0 || nv == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.4g\t%.2fx %s\t\n", n.Scenario, m.name, ov, nv, nv/ov, verdict(ov, nv, m.higherBetter, threshold))
		}
	}
	tw.Flush()
}

func verdict(old, cur float64, higherBetter bool, threshold float64) string {
	ratio := cur / old
	switch {
	case ratio > 1-threshold && ratio < 1+threshold:
		return "~"
	case (ratio > 1) == higherBetter:
		return "better"
	default:
		return "worse"
	}
}

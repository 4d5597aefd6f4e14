package bench

import (
	"errors"
	"fmt"
	"io"
	"slices"
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
// 10 %) are reported as "~": this machine is shared and noisy. A failed run is compared with
// nothing: its line says FAILED, every failed run of either report (its peers' rounds too) is
// listed at the end, and Compare returns them as an error.
func Compare(w io.Writer, old, cur *Report, threshold float64) error {
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
		if o.Failed() || n.Failed() {
			fmt.Fprintf(tw, "%s\tFAILED\t%s\t%s\t\t\n", n.Scenario, failedMark(o), failedMark(n))
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
	var errs []error
	for _, rep := range []struct {
		name string
		r    *Report
	}{{"old", old}, {"new", cur}} {
		failed := failedRuns(allRuns(rep.r))
		if len(failed) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s) has failed runs, compared with nothing:\n", rep.name, rep.r.Commit)
		if err := WriteFailures(w, failed); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rep.name, err))
		}
	}
	return errors.Join(errs...)
}

// allRuns are every run of a report once: its peers' rounds, and the results that are not
// one of them (Results repeats vk-static's last round of a -peers run).
func allRuns(rep *Report) []*Result {
	type runKey struct {
		scenario, peer string
		round          int
	}
	seen := map[runKey]bool{}
	out := slices.Clone(rep.Peers)
	for _, r := range rep.Peers {
		seen[runKey{r.Scenario, r.Peer, r.Round}] = true
	}
	for _, r := range rep.Results {
		if r.Round == 0 || !seen[runKey{r.Scenario, r.Peer, r.Round}] {
			out = append(out, r)
		}
	}
	return out
}

// failedMark is a cell of Compare's FAILED line: "failed" or "ok".
func failedMark(r *Result) string {
	if r.Failed() {
		return "failed"
	}
	return "ok"
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

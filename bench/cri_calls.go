package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/vk-static/vk-static/bench/criproxy"
)

// criStartMethods are the calls that start a pod, every agent's alike; the tables list them
// first.
var criStartMethods = []string{"RunPodSandbox", "CreateContainer", "StartContainer"}

// criHistogramBoundsMs are the upper bounds of CRICall.Histogram's buckets, in ms.
var criHistogramBoundsMs = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000}

// CRICall is what one CRI method's calls took in one phase, as the timing proxy in front of
// the runtime saw them (bench/criproxy).
type CRICall struct {
	Calls        int         `json:"calls"`
	Errors       int         `json:"errors,omitempty"`
	Latency      Percentiles `json:"latency"`      // seconds
	TotalSeconds float64     `json:"totalSeconds"` // every call's duration added up
	// MaxInFlight is the most calls of the method in flight at once: 1 is one at a time.
	MaxInFlight int               `json:"maxInFlight"`
	Histogram   []HistogramBucket `json:"histogram,omitempty"`
}

// HistogramBucket counts the calls that took at most LeMs milliseconds and more than the
// bucket before's bound; the last bucket, with no LeMs, counts the calls above every bound.
// Empty buckets are left out.
type HistogramBucket struct {
	LeMs  float64 `json:"leMs,omitempty"`
	Count int     `json:"count"`
}

// criCalls summarises the proxy's recording of one phase by method.
func criCalls(rec map[string]criproxy.Calls) map[string]CRICall {
	if len(rec) == 0 {
		return nil
	}
	out := make(map[string]CRICall, len(rec))
	for m, c := range rec {
		s := CRICall{Calls: len(c.Durations), Errors: c.Errors, Latency: percentiles(c.Durations), MaxInFlight: c.MaxInFlight, Histogram: histogram(c.Durations)}
		for _, d := range c.Durations {
			s.TotalSeconds += d.Seconds()
		}
		out[m] = s
	}
	return out
}

// histogram counts samples in criHistogramBoundsMs's buckets.
func histogram(samples []time.Duration) []HistogramBucket {
	counts := make([]int, len(criHistogramBoundsMs)+1)
	for _, d := range samples {
		ms := float64(d) / float64(time.Millisecond)
		i, _ := slices.BinarySearch(criHistogramBoundsMs, ms) // the first bound ≥ ms
		counts[i]++
	}
	var out []HistogramBucket
	for i, n := range counts {
		if n == 0 {
			continue
		}
		b := HistogramBucket{Count: n}
		if i < len(criHistogramBoundsMs) {
			b.LeMs = criHistogramBoundsMs[i]
		}
		out = append(out, b)
	}
	return out
}

// criMethodOrder is the order the tables list methods in: the start calls, then the others by
// name.
func criMethodOrder(methods []string) []string {
	slices.SortFunc(methods, func(a, b string) int {
		ia, ib := slices.Index(criStartMethods, a), slices.Index(criStartMethods, b)
		if ia < 0 {
			ia = len(criStartMethods)
		}
		if ib < 0 {
			ib = len(criStartMethods)
		}
		return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
	})
	return slices.Compact(methods)
}

// writeCRICalls prints one run's start-up calls, method by method (WriteTable).
func writeCRICalls(w io.Writer, scenario string, calls map[string]CRICall) {
	if len(calls) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: CRI calls while the pods started (timing proxy): calls, latency p50/p90/p99/max ms, most in flight at once\n", scenario)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, m := range criMethodOrder(slices.Collect(maps.Keys(calls))) {
		c := calls[m]
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t\n", m, c.Calls, quadMs(c.Latency), c.MaxInFlight)
	}
	tw.Flush()
}

// writePeerCRICalls prints the start-up CRI calls of each peer side by side, as medians over
// its good rounds: calls, p50/p90/p99 ms and most in flight at once (WritePeerTable).
func writePeerCRICalls(w io.Writer, runs peerRuns, peers []string) {
	var methods []string
	for _, p := range peers {
		for _, r := range runs.good(p) {
			if r.CRI != nil {
				methods = append(methods, slices.Collect(maps.Keys(r.CRI.StartCalls))...)
			}
		}
	}
	if len(methods) == 0 {
		return
	}
	fmt.Fprintln(w, "CRI calls while the pods started, through the same timing proxy for every peer (medians over rounds): calls, latency p50/p90/p99 ms, most in flight at once")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for _, p := range peers {
		fmt.Fprintf(tw, "%s calls\tp50/p90/p99 ms\tin flight\t", p)
	}
	fmt.Fprintln(tw)
	for _, m := range criMethodOrder(methods) {
		fmt.Fprintf(tw, "%s\t", m)
		for _, p := range peers {
			get := func(f func(CRICall) float64) float64 {
				return runs.median(p, func(r *Result) float64 {
					if r.CRI == nil {
						return 0
					}
					c, ok := r.CRI.StartCalls[m]
					if !ok {
						return 0
					}
					return f(c)
				})
			}
			n := get(func(c CRICall) float64 { return float64(c.Calls) })
			if n == 0 {
				fmt.Fprint(tw, "-\t\t\t")
				continue
			}
			fmt.Fprintf(tw, "%.0f\t%.0f/%.0f/%.0f\t%.0f\t", n,
				get(func(c CRICall) float64 { return c.Latency.P50 * 1000 }),
				get(func(c CRICall) float64 { return c.Latency.P90 * 1000 }),
				get(func(c CRICall) float64 { return c.Latency.P99 * 1000 }),
				get(func(c CRICall) float64 { return float64(c.MaxInFlight) }))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func quadMs(p Percentiles) string {
	if p.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f/%.1f/%.1f/%.1f", p.P50*1000, p.P90*1000, p.P99*1000, p.Max*1000)
}

package bench

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// A run fails when it did not do what it measures: not every pod was seen Running (or
// deleted), the agent under test exited before the harness stopped it, or the scenario
// returned an error. A failed run keeps what it measured, but Result.Error says why it
// failed, and nothing counts it as a measurement: medians and ratios leave it out, Compare
// prints it as FAILED and returns an error, and vkbench exits non-zero. Without that mark a
// run whose pods never started would look fast — AllRunningSeconds is the last pod that did
// start — and a run that measured nothing would pull medians towards zero.

// Failed reports whether the run failed (Result.Error is set).
func (r *Result) Failed() bool { return r.Error != "" }

// markFailed records in r why its run failed, if it did: err (what the scenario returned),
// and what r's own numbers show (incomplete). A reason already in r.Error is not repeated.
func markFailed(r *Result, err error) {
	var reasons []string
	add := func(reason string) {
		if reason != "" && !strings.Contains(r.Error, reason) && !strings.Contains(strings.Join(reasons, "; "), reason) {
			reasons = append(reasons, reason)
		}
	}
	if err != nil {
		add(err.Error())
	}
	add(incomplete(r))
	if len(reasons) == 0 {
		return
	}
	if r.Error != "" {
		reasons = append([]string{r.Error}, reasons...)
	}
	r.Error = strings.Join(reasons, "; ")
}

// incomplete says what r's numbers show was not done ("" when nothing): pods that never
// turned Running, or fewer pods seen Running than the scenario started. It needs nothing but
// the result, so a result file written before runs were marked is judged the same way
// (ReadJSON).
func incomplete(r *Result) string {
	switch {
	case r.NeverRunning > 0:
		s := fmt.Sprintf("%d of %d pods never Running", r.NeverRunning, r.Pods)
		if r.NeverRunningPods != "" {
			s += " (" + r.NeverRunningPods + ")"
		}
		return s
	case r.StartLatency.N > 0 && r.StartLatency.N < r.Pods:
		return fmt.Sprintf("only %d of %d pods seen Running", r.StartLatency.N, r.Pods)
	}
	return ""
}

// runFailure is a failed run's error: its Result.Error, wrapping what the scenario returned
// (so that errors.Is still finds context.Canceled in it).
type runFailure struct {
	reason string
	cause  error
}

func (f runFailure) Error() string { return f.reason }
func (f runFailure) Unwrap() error { return f.cause }

// failedRuns are the failed runs among results.
func failedRuns(results []*Result) []*Result {
	var out []*Result
	for _, r := range results {
		if r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// runName names a run in a FAILED line: its scenario, and its peer and round when it has them.
func runName(r *Result) string {
	s := r.Scenario
	if r.Peer != "" || r.Round > 0 {
		s += " " + peerName(r)
	}
	if r.Round > 0 {
		s += fmt.Sprintf(" round %d", r.Round)
	}
	return s
}

// WriteFailures prints one FAILED line for each failed run in results and returns them as one
// error (nil when none failed).
func WriteFailures(w io.Writer, results []*Result) error {
	var errs []error
	for _, r := range failedRuns(results) {
		fmt.Fprintf(w, "FAILED: %s: %s\n", runName(r), r.Error)
		errs = append(errs, fmt.Errorf("%s: %s", runName(r), r.Error))
	}
	return errors.Join(errs...)
}

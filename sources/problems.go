package sources

import (
	"errors"
	"fmt"

	"k8s.io/klog/v2"
)

// Problem is a rejected manifest or pod: a file or HTTP body that failed to decode, or a pod
// refused by the merger (duplicate name); or a whole source that cannot be read
// (ErrSourceUnavailable), whose end a RecoveryReporter hears about. The pod sync loop turns
// Problems into Events on the Node and a metric; sources only report them.
type Problem struct {
	// Source is podutil.FileSource, podutil.HTTPSource or podutil.APIServerSource.
	Source string
	// Location is the file path or URL (credentials redacted), or the pod's full name when the
	// pod has no better location.
	Location string
	// Err says what is wrong; for decode failures it is a *DecodeError and errors.Is works with
	// ErrInvalid, ErrForbiddenReference, ErrTooLarge, ErrSyntax, ErrNotAPod and ErrDuplicateName.
	Err error
}

// Summary is the log message for p: what kind of problem it is (the location and the error are
// logged beside it).
func (p Problem) Summary() string {
	if errors.Is(p.Err, ErrSourceUnavailable) {
		return "Manifest source unavailable; keeping its pods until it is back"
	}
	return "Rejected manifest or pod"
}

func (p Problem) String() string {
	return fmt.Sprintf("%s source: %s: %v", p.Source, p.Location, p.Err)
}

// ProblemReporter receives Problems. ReportProblem must not block: it is called from the
// sources' own loops. Each distinct problem is reported once, not on every re-list or poll.
//
// The reporter is where a problem becomes visible, the log included (NodeProblemReporter logs
// it, records an Event and counts it): the sources and the Mux do not log what they report, so
// a problem is logged once, and a library user's reporter decides how it is shown. With no
// reporter they log it at error level themselves.
type ProblemReporter interface {
	ReportProblem(Problem)
}

// ProblemReporterFunc adapts a function to ProblemReporter.
type ProblemReporterFunc func(Problem)

// ReportProblem calls f(p).
func (f ProblemReporterFunc) ReportProblem(p Problem) { f(p) }

// report sends p to r. Logging it here as well would log every problem twice, since the reporter
// every problem passes logs it; but a nil reporter is allowed, and a rejected manifest must
// never go unseen, so then p is logged here instead.
func report(logger klog.Logger, r ProblemReporter, p Problem) {
	if r == nil {
		logger.Error(p.Err, p.Summary(), "source", p.Source, "location", p.Location)
		return
	}
	r.ReportProblem(p)
}

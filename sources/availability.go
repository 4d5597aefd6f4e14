package sources

import (
	"errors"

	"k8s.io/klog/v2"
)

// ErrSourceUnavailable marks a Problem about a whole source rather than one manifest: the
// manifest path does not exist or cannot be read, or the manifest URL cannot be fetched. Such a
// source keeps the pods it last had (one that has not been seen yet stays unseen, so that no pod
// is stopped because of it) until it is back, and its return is reported to a RecoveryReporter.
var ErrSourceUnavailable = errors.New("source unavailable")

// RecoveryReporter is a ProblemReporter that also hears when a source it was told is
// unavailable (ErrSourceUnavailable) is back. NodeProblemReporter is one. ReportRecovery must not
// block either; it is called once per recovery, with the Problem that is over.
type RecoveryReporter interface {
	ProblemReporter
	ReportRecovery(Problem)
}

// availability tracks whether a source can be read, so that it going bad is reported once (and
// again only if the reason changes) and its recovery once, not at every re-list or poll. Only
// the source's own goroutine uses it.
type availability struct {
	problem *Problem // the problem reported last; nil while the source is available
}

// unavailable reports p (whose Err wraps ErrSourceUnavailable) unless the same was reported
// last.
func (a *availability) unavailable(logger klog.Logger, r ProblemReporter, p Problem) {
	if a.problem != nil && a.problem.Err.Error() == p.Err.Error() {
		return
	}
	a.problem = &p
	report(logger, r, p)
}

// available reports the recovery from the last problem, if there was one. It returns whether
// there was.
func (a *availability) available(logger klog.Logger, r ProblemReporter) bool {
	if a.problem == nil {
		return false
	}
	p := *a.problem
	a.problem = nil
	if rr, ok := r.(RecoveryReporter); ok {
		rr.ReportRecovery(p)
	} else {
		logger.Info("Manifest source available again", "source", p.Source, "location", p.Location, "after", p.Err.Error())
	}
	return true
}

// ok reports whether the source is available (nothing reported, or recovered since).
func (a *availability) ok() bool { return a.problem == nil }

package node

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/sources"
)

// Event reasons of source problems on the Node.
const (
	// ReasonFailedManifest: a manifest or pod was rejected (Warning).
	ReasonFailedManifest = "FailedManifest"
	// ReasonManifestSourceUnavailable: a source cannot be read — its manifest path does not
	// exist or cannot be listed, or its URL cannot be fetched (Warning). Its pods are kept.
	ReasonManifestSourceUnavailable = "ManifestSourceUnavailable"
	// ReasonManifestSourceAvailable: a source reported unavailable can be read again (Normal).
	ReasonManifestSourceAvailable = "ManifestSourceAvailable"
)

// NodeProblemReporter turns rejected manifests into a Warning Event on the Node (visible with
// `kubectl describe node`), a log line and a metric; and a source that goes bad
// (sources.ErrSourceUnavailable) into a Warning Event and an error log line, and its recovery
// into a Normal Event and an info line. It never blocks: the event recorder queues.
type NodeProblemReporter struct {
	NodeName string
	Recorder record.EventRecorder // nil: log and count only (standalone)
	Metrics  *Metrics
	// Logger writes a problem's only log line: the sources leave logging to the reporter they
	// are given (see sources.ProblemReporter). The zero Logger discards it.
	Logger klog.Logger
}

var _ sources.RecoveryReporter = (*NodeProblemReporter)(nil)

// ReportProblem implements sources.ProblemReporter.
func (r *NodeProblemReporter) ReportProblem(p sources.Problem) {
	r.Logger.Error(p.Err, p.Summary(), "source", p.Source, "location", p.Location)
	if errors.Is(p.Err, sources.ErrSourceUnavailable) {
		// Not a rejected manifest: no manifest was read.
		if r.Recorder != nil {
			r.Recorder.Eventf(nodeRef(r.NodeName), corev1.EventTypeWarning, ReasonManifestSourceUnavailable,
				"Cannot read the %s source %s; keeping its pods until it is back: %v", p.Source, p.Location, p.Err)
		}
		return
	}
	r.Metrics.rejectedManifest(p.Source)
	if r.Recorder != nil {
		r.Recorder.Eventf(nodeRef(r.NodeName), corev1.EventTypeWarning, ReasonFailedManifest,
			"Rejected %s %s: %v", p.Source, p.Location, p.Err)
	}
}

// ReportRecovery implements sources.RecoveryReporter.
func (r *NodeProblemReporter) ReportRecovery(p sources.Problem) {
	r.Logger.Info("Manifest source available again", "source", p.Source, "location", p.Location, "after", p.Err.Error())
	if r.Recorder != nil {
		r.Recorder.Eventf(nodeRef(r.NodeName), corev1.EventTypeNormal, ReasonManifestSourceAvailable,
			"The %s source %s can be read again", p.Source, p.Location)
	}
}

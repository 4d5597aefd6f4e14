package node

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/sources"
)

// NodeProblemReporter turns rejected manifests into a Warning Event on the Node (visible with
// `kubectl describe node`), a log line and a metric. It never blocks: the event recorder
// queues.
type NodeProblemReporter struct {
	NodeName string
	Recorder record.EventRecorder // nil: log and count only (standalone)
	Metrics  *Metrics
	// Logger writes a problem's only log line: the sources leave logging to the reporter they
	// are given (see sources.ProblemReporter). The zero Logger discards it.
	Logger klog.Logger
}

// ReportProblem implements sources.ProblemReporter.
func (r *NodeProblemReporter) ReportProblem(p sources.Problem) {
	r.Logger.Error(p.Err, "Rejected manifest or pod", "source", p.Source, "location", p.Location)
	r.Metrics.rejectedManifest(p.Source)
	if r.Recorder != nil {
		r.Recorder.Eventf(nodeRef(r.NodeName), corev1.EventTypeWarning, "FailedManifest",
			"Rejected %s %s: %v", p.Source, p.Location, p.Err)
	}
}

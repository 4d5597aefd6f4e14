package node

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/tools/record"

	"github.com/vk-static/vk-static/sources"
)

// A rejected manifest is a FailedManifest Warning; a source that cannot be read is a
// ManifestSourceUnavailable Warning, and its recovery a ManifestSourceAvailable Normal event.
func TestNodeProblemReporterEvents(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	r := &NodeProblemReporter{NodeName: "n1", Recorder: rec}
	gone := sources.Problem{Source: "file", Location: "/etc/manifests",
		Err: fmt.Errorf("%w: stat /etc/manifests: no such file or directory", sources.ErrSourceUnavailable)}
	r.ReportProblem(sources.Problem{Source: "file", Location: "/etc/manifests/a.yaml", Err: errors.New("bad")})
	r.ReportProblem(gone)
	r.ReportRecovery(gone)
	for _, want := range []string{
		"Warning FailedManifest Rejected file /etc/manifests/a.yaml: bad",
		"Warning ManifestSourceUnavailable Cannot read the file source /etc/manifests; keeping its pods until it is back: source unavailable: stat /etc/manifests: no such file or directory",
		"Normal ManifestSourceAvailable The file source /etc/manifests can be read again",
	} {
		assert.Equal(t, want, <-rec.Events)
	}

	// Standalone: no recorder, nothing breaks.
	(&NodeProblemReporter{NodeName: "n1"}).ReportRecovery(gone)
}

package probe

import "k8s.io/apimachinery/pkg/types"

// Update is a change of one worker's verdict, reported by the Manager.
type Update struct {
	PodUID    types.UID
	Container string
	// Instance is the container instance (its runtime ID) the verdict is about.
	Instance string
	Kind     Kind
	Result   Result
	// Message is the output of the probe that decided it (the HTTP body, the command's output,
	// the dial error), for the caller's own messages.
	Message string
}

// Reasons of the Warning events the kubelet records for single probe attempts.
const (
	// ReasonUnhealthy: a probe attempt failed, or errored.
	ReasonUnhealthy = "Unhealthy"
	// ReasonProbeWarning: a probe attempt passed with a warning (an HTTP redirect not followed).
	ReasonProbeWarning = "ProbeWarning"
)

// Event is a probe attempt the kubelet records as a Warning event on the container — every
// failed attempt, not only the ones that change the verdict.
type Event struct {
	PodUID    types.UID
	Container string
	Instance  string
	Kind      Kind
	Reason    string
	// Message is the kubelet's: "Liveness probe failed: ...", "Readiness probe errored and
	// resulted in unknown state: ...", "Startup probe warning: ...".
	Message string
}

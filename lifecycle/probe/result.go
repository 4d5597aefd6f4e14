package probe

// Result is a probe worker's verdict on one container instance, as the kubelet's prober results:
// what Manager stores and reports.
type Result int

const (
	// Unknown is no verdict: a startup probe before its threshold, or an instance the
	// Manager does not hold.
	Unknown Result = iota
	// Success: the probe passed successThreshold times in a row.
	Success
	// Failure: the probe failed failureThreshold times in a row.
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	default:
		return "Unknown"
	}
}

// Kind is which of a container's probes a worker runs.
type Kind int

const (
	// Liveness: a Failure verdict means the instance is to be restarted.
	Liveness Kind = iota
	// Readiness: whether the instance serves traffic.
	Readiness
	// Startup: liveness and readiness wait for its Success; a Failure restarts the instance.
	Startup
)

// kinds lists every Kind, in the order the Manager starts their workers.
var kinds = [...]Kind{Startup, Readiness, Liveness}

// String is the kubelet's name for the probe type, the first word of its event messages
// ("Liveness probe failed: ...").
func (k Kind) String() string {
	switch k {
	case Liveness:
		return "Liveness"
	case Readiness:
		return "Readiness"
	case Startup:
		return "Startup"
	default:
		return "UNKNOWN"
	}
}

// outcome is one probe attempt's result, as the kubelet's pkg/probe.Result: a warning is a
// success that the kubelet reports with a ProbeWarning event (an HTTP redirect it did not follow).
type outcome int

const (
	outcomeUnknown outcome = iota
	outcomeSuccess
	outcomeWarning
	outcomeFailure
)

// String is the kubelet's spelling of a probe.Result, used in its "probe errored and resulted in
// %s state" message.
func (o outcome) String() string {
	switch o {
	case outcomeSuccess:
		return "success"
	case outcomeWarning:
		return "warning"
	case outcomeFailure:
		return "failure"
	default:
		return "unknown"
	}
}

// result is what a worker counts: a warning passes.
func (o outcome) result() Result {
	switch o {
	case outcomeSuccess, outcomeWarning:
		return Success
	default:
		return Failure
	}
}

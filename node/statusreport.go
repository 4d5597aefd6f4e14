package node

import "time"

// statusReport decides when a status that has not changed is written again, as the kubelet's
// nodeStatusReportFrequency does: with a Lease renewing the node's liveness every few seconds,
// the status needs writing only when it changes and, to refresh its heartbeats, once a report
// period. After a change or a (re)start the next period is stretched or shortened by a random
// delay in [-½, +½) of a period, so that a fleet started together, or changed together, does
// not write together forever after; the periods that follow are exact.
type statusReport struct {
	frequency time.Duration
	rand      func() float64 // uniform in [0, 1)

	last  time.Time     // the last write; zero: none yet
	delay time.Duration // added to the period that started at last
}

// expired reports whether an unchanged status is due to be written at now.
func (r *statusReport) expired(now time.Time) bool {
	return now.Sub(r.last) >= r.frequency+r.delay
}

// written records a status write at now; changed says it carried a change (not only heartbeats).
func (r *statusReport) written(now time.Time, changed bool) {
	if changed || r.last.IsZero() {
		r.delay = time.Duration(float64(r.frequency) * (r.rand() - 0.5))
	} else {
		r.delay = 0
	}
	r.last = now
}

package node

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The kubelet's isUpdateStatusPeriodExpired and calculateDelay: a random delay in [-½, +½) of
// the period after a change or the first write, none after a write that only refreshed
// heartbeats.
func TestStatusReport(t *testing.T) {
	const period = 5 * time.Minute
	t0 := statusEpoch
	for _, tc := range []struct {
		name       string
		draw       float64
		writes     []bool // changed, for each write; written at t0, t0+period, …
		wantExpiry time.Duration
	}{
		{name: "nothing written yet", wantExpiry: 0},
		{name: "first write, early draw", draw: 0, writes: []bool{false}, wantExpiry: period / 2},
		{name: "first write, late draw", draw: 0.75, writes: []bool{false}, wantExpiry: period + period/4},
		{name: "heartbeat-only write: exact period", draw: 0.9, writes: []bool{true, false}, wantExpiry: period + period},
		{name: "change: random again", draw: 0.25, writes: []bool{false, true}, wantExpiry: period + period*3/4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := statusReport{frequency: period, rand: func() float64 { return tc.draw }}
			for i, changed := range tc.writes {
				r.written(t0.Add(time.Duration(i)*period), changed)
			}
			if len(tc.writes) > 0 {
				assert.False(t, r.expired(t0.Add(tc.wantExpiry-time.Nanosecond)), "expired before %v", tc.wantExpiry)
			}
			assert.True(t, r.expired(t0.Add(tc.wantExpiry)), "not expired at %v", tc.wantExpiry)
		})
	}
}

package bench

import (
	"math"
	"sort"
	"time"
)

// Percentiles summarise a latency distribution, in seconds.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// percentiles uses the nearest-rank method (the value below which p% of the samples fall,
// never interpolated), so a p99 is always a latency that really happened.
func percentiles(samples []time.Duration) Percentiles {
	if len(samples) == 0 {
		return Percentiles{}
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(s)))) - 1
		return s[max(i, 0)].Seconds()
	}
	return Percentiles{N: len(s), P50: rank(50), P90: rank(90), P99: rank(99), Max: s[len(s)-1].Seconds()}
}

package memlimit

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/go-logr/logr"
)

// CheckInterval is how often the live heap is compared with the limit.
const CheckInterval = 10 * time.Second

// raiseAbove is the share of the limit the live heap may reach before the limit is raised;
// the raised limit leaves the live heap that share again.
const raiseAbove = 0.9

// Limiter holds the soft memory limit.
type Limiter struct {
	limit int64
	// live reads the live heap in bytes, after the last collection.
	live func() uint64
	// set applies a limit (debug.SetMemoryLimit).
	set func(int64) int64
}

// FromEnvironment reports whether GOMEMLIMIT is set: the runtime has applied it, and it wins.
func FromEnvironment() bool {
	_, ok := os.LookupEnv("GOMEMLIMIT")
	return ok
}

// New sets limit as the soft memory limit of this process.
func New(limit int64) *Limiter {
	l := &Limiter{limit: limit, live: liveHeap, set: debug.SetMemoryLimit}
	l.set(limit)
	return l
}

// Limit is the limit in force.
func (l *Limiter) Limit() int64 { return l.limit }

// Run raises the limit, every CheckInterval until ctx ends, when the live heap nears it.
func (l *Limiter) Run(ctx context.Context, logger logr.Logger) {
	t := time.NewTicker(CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.check(logger)
		}
	}
}

// check raises the limit when the live heap is above raiseAbove of it: the collector would
// otherwise run nearly all the time to stay under it.
func (l *Limiter) check(logger logr.Logger) {
	live := int64(l.live())
	if float64(live) <= raiseAbove*float64(l.limit) {
		return
	}
	raised := int64(float64(live) / raiseAbove * 1.5)
	logger.Info("Live heap near the soft memory limit; raising the limit (set --memory-limit or GOMEMLIMIT to choose it)",
		"liveBytes", live, "limitBytes", l.limit, "newLimitBytes", raised)
	l.limit = raised
	l.set(raised)
}

// liveHeap reads the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

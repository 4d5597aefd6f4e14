package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// All Running counts from the first create; AfterLastSentSeconds from the last one.
func TestFillStartLatenciesAfterLastSent(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sent := []time.Time{start, start.Add(4 * time.Second)}
	pods := []podTimes{{Name: "a", Running: start.Add(time.Second)}, {Name: "b", Running: start.Add(6 * time.Second)}}
	res := &Result{Pods: 2}
	fillStartLatencies(res, pods, []string{"a", "b"}, sent, start)
	assert.InDelta(t, 6, res.AllRunningSeconds, 1e-9)
	assert.InDelta(t, 2, res.AfterLastSentSeconds, 1e-9)
}

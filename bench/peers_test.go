package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWritePeerTableMediansAndRatios(t *testing.T) {
	run := func(peer string, round int, running, rss float64) *Result {
		return &Result{Scenario: "api-1k", Peer: peer, Round: round, AllRunningSeconds: running, PeakRSSMB: rss,
			StartCPUSeconds: 1, DeleteCPUSeconds: 1, DeleteSeconds: 4, StartLatency: Percentiles{P99: 2}}
	}
	results := []*Result{
		run("", 1, 3, 60), run(PeerFloor, 1, 2, 40),
		run("", 2, 5, 80), run(PeerFloor, 2, 2, 40),
		run("", 3, 4, 70), run(PeerFloor, 3, 100, 40), // an outlier round moves no median
	}
	var buf bytes.Buffer
	WritePeerTable(&buf, results, []string{PeerVKStatic, PeerFloor})
	out := buf.String()

	assert.Contains(t, out, "api-1k: medians of 3 round(s)")
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 {
			rows[strings.Join(f[:len(f)-3], " ")] = f[len(f)-3:]
		}
	}
	tests := []struct{ row, vk, floor, ratio string }{
		{"all Running s", "4.00", "2.00", "2.00×"},
		{"peak RSS MB", "70.00", "40.00", "1.75×"},
		{"agent CPU s", "2.00", "2.00", "1.00×"},
		{"start p99 s", "2.00", "2.00", "1.00×"},
		{"all deleted s", "4.00", "4.00", "1.00×"},
	}
	for _, tt := range tests {
		assert.Equal(t, []string{tt.vk, tt.floor, tt.ratio}, rows[tt.row], tt.row)
	}
}

func TestRatioOfUnmeasured(t *testing.T) {
	assert.Equal(t, "-", ratio(0, 1))
	assert.Equal(t, "-", ratio(1, 0))
	assert.Equal(t, "0.50×", ratio(1, 2))
}

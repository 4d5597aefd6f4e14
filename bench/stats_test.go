package bench

import (
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // unsorted on purpose: 100..1
	}
	tests := []struct {
		name    string
		samples []time.Duration
		want    Percentiles
	}{
		{"empty", nil, Percentiles{}},
		{"one", ms(7), Percentiles{N: 1, P50: 0.007, P90: 0.007, P99: 0.007, Max: 0.007}},
		{"nearest rank, never interpolated", ms(1, 2, 3, 4), Percentiles{N: 4, P50: 0.002, P90: 0.004, P99: 0.004, Max: 0.004}},
		{"1..100 ms", ms(hundred...), Percentiles{N: 100, P50: 0.050, P90: 0.090, P99: 0.099, Max: 0.100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentiles(tt.samples); got != tt.want {
				t.Errorf("percentiles = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    float64
		wantErr bool
	}{
		// utime (field 14) = 250 ticks, stime (field 15) = 50 ticks.
		{"plain", "123 (vk-static) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 12 0 100 0 0", 3.0, false},
		{"name with spaces and parens", "123 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 1 2 0 0", 0.03, false},
		{"truncated", "123 (x) S 1 2", 0, true},
		{"no command", "garbage", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU(tt.stat)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("cpu = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadProcSelf(t *testing.T) {
	// Burn a little CPU so the sample cannot be all zeros by accident.
	deadline := time.Now().Add(30 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	s, err := readProc(pidSelf())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSBytes <= 0 || s.PeakRSS < s.RSSBytes {
		t.Errorf("rss %d, peak %d: want 0 < rss <= peak", s.RSSBytes, s.PeakRSS)
	}
	if s.CPUSeconds <= 0 {
		t.Errorf("cpu %v: want > 0 after burning CPU", s.CPUSeconds)
	}
}

func TestSampleMemKeepsTheLargestParts(t *testing.T) {
	var m memPeaks
	m.add(procSample{AnonBytes: 5, FileBytes: 9})
	m.add(procSample{AnonBytes: 7, FileBytes: 3})
	if anon, file := m.get(); anon != 7 || file != 9 {
		t.Errorf("peaks anon %d, file %d: want 7, 9 (each part's own largest)", anon, file)
	}

	// On this process: it samples at once, and returns when done is closed.
	var self memPeaks
	done := make(chan struct{})
	close(done)
	sampleMem(pidSelf(), &self, done)
	if anon, file := self.get(); anon <= 0 || file <= 0 {
		t.Errorf("peaks of this process anon %d, file %d: want both > 0", anon, file)
	}
}

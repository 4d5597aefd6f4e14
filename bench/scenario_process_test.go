package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/internal/agentproc"
)

func TestParsePss(t *testing.T) {
	rollup := "55d0c0000000-7ffd000000 ---p 00000000 00:00 0    [rollup]\nRss:               45000 kB\nPss:                1234 kB\nPss_Anon:           1000 kB\n"
	pss, err := parsePss(rollup)
	require.NoError(t, err)
	require.Equal(t, int64(1234*1024), pss)
	_, err = parsePss("Rss: 1 kB\n")
	require.Error(t, err)
}

func TestMedianSumMax(t *testing.T) {
	tests := []struct {
		name              string
		v                 []float64
		median, sum, maxV float64
	}{
		{"none", nil, 0, 0, 0},
		{"odd count, unsorted", []float64{3, 1, 2}, 2, 6, 3},
		{"even count takes the mean of the middle two", []float64{4, 1, 3, 2}, 2.5, 10, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.median, median(tt.v))
			require.Equal(t, tt.sum, sum(tt.v))
			require.Equal(t, tt.maxV, maxOf(tt.v))
		})
	}
}

func TestFirstProcesses(t *testing.T) {
	procs := []agentproc.ContainerProcess{
		{Pid: 10, Session: 10, Command: "vk-static-supervisor"},
		{Pid: 11, Session: 11, Command: "sleep 3600"},
		{Pid: 12, Session: 12, Command: "vk-static-supervisor"},
	}
	tests := []struct {
		name  string
		procs []agentproc.ContainerProcess
		limit int
		want  string
	}{
		{"none", nil, 4, ""},
		{"all within the limit", procs, 3, "pid 10 (session 10): vk-static-supervisor, pid 11 (session 11): sleep 3600, pid 12 (session 12): vk-static-supervisor"},
		{"more than the limit", procs, 1, "pid 10 (session 10): vk-static-supervisor, and 2 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, firstProcesses(tt.procs, tt.limit))
		})
	}
}

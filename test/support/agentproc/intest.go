package agentproc

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	// readyTimeout is how long StartInTest waits for /readyz.
	readyTimeout = 30 * time.Second
	// stopGrace is how long a test's agent has to exit after SIGTERM.
	stopGrace = 20 * time.Second
	// logTail is how many of the last lines of a failed test's agent log are printed.
	logTail = 200
)

// StartInTest starts the agent of cfg for test t and waits until it is ready. When t ends the
// agent is stopped — an unclean exit or a data race in its log fails t —, whatever still runs
// for its containers is killed and fails t (FailOnLeaks: with --provider process containers
// outlive their agent), and if t failed the end of the agent's log is printed.
//
// An agent that exits at its start because a port Start picked was taken meanwhile (testenv's
// FreePort closes its listener, and any connection's ephemeral port may land on it) is started
// again on other ports, twice at most: the race is the harness's, not the agent's.
func StartInTest(t testing.TB, cfg Config) *Agent {
	t.Helper()
	a, err := Start(cfg)
	require.NoError(t, err)
	for attempt := 1; attempt < portRaceAttempts && a.lostPortRace(); attempt++ {
		t.Logf("agent %s exited at its start: a port it was given was taken meanwhile; starting it again on others", a.Node)
		a, err = Start(cfg)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		if err := a.Stop(stopGrace); err != nil {
			t.Error(err)
		}
		FailOnLeaks(t, a.Dir)
		if t.Failed() {
			if data, err := os.ReadFile(a.LogPath); err == nil {
				t.Logf("agent log (%s):\n%s", a.Node, lastLines(string(data), logTail))
			}
		}
	})
	a.RequireReady(t)
	return a
}

// RequireReady waits until the agent is ready, failing t after 30 s or when it exits.
func (a *Agent) RequireReady(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	require.NoError(t, a.WaitReady(ctx))
}

// StopInTest stops the agent (if it runs); an unclean exit or a data race fails t.
func (a *Agent) StopInTest(t testing.TB) {
	t.Helper()
	if err := a.Stop(stopGrace); err != nil {
		t.Error(err)
	}
}

var nodeSeq atomic.Int32

// NodeName is a node name made from t's name, unique in the run: mirrors and Nodes outlive an
// agent, and go test -count=N runs a test again.
func NodeName(t testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	return strings.Trim(s[:min(len(s), 40)], "-") + "-" + strconv.Itoa(int(nodeSeq.Add(1)))
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// portRaceAttempts is how many times StartInTest starts an agent that loses a port race.
const portRaceAttempts = 3

// lostPortRace reports whether the agent exited before it was ready because one of its ports
// was in use: it waits for it to be ready or gone, as RequireReady would.
func (a *Agent) lostPortRace() bool {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	if a.WaitReady(ctx) == nil {
		return false
	}
	select {
	case <-a.Exited():
	default:
		return false
	}
	data, err := os.ReadFile(a.LogPath)
	return err == nil && int64(len(data)) >= a.logOffset && strings.Contains(string(data[a.logOffset:]), "bind: address already in use")
}

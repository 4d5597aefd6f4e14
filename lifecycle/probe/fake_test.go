package probe

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
)

// fakeContainer answers exec probes by the command's name from a script of exit codes (the last
// one repeats), and records each call with the clock's time.
type fakeContainer struct {
	clk   clock.PassiveClock
	calls chan call

	mu    sync.Mutex
	codes map[string][]int
}

type call struct {
	cmd string
	at  time.Time
}

func newFakeContainer(clk clock.PassiveClock, scripts map[string][]int) *fakeContainer {
	return &fakeContainer{clk: clk, calls: make(chan call, 1000), codes: scripts}
}

func (f *fakeContainer) exec(_ context.Context, cmd []string) ([]byte, int, error) {
	f.mu.Lock()
	codes := f.codes[cmd[0]]
	if len(codes) == 0 {
		f.mu.Unlock()
		return nil, 0, fmt.Errorf("no script for %q", cmd[0])
	}
	code := codes[0]
	if len(codes) > 1 {
		f.codes[cmd[0]] = codes[1:]
	}
	f.mu.Unlock()
	f.calls <- call{cmd: cmd[0], at: f.clk.Now()}
	return fmt.Appendf(nil, "%s exit %d", cmd[0], code), code, nil
}

// drained returns the calls made so far, without waiting.
func (f *fakeContainer) drained() []string {
	var got []string
	for {
		select {
		case c := <-f.calls:
			got = append(got, c.cmd)
		default:
			return got
		}
	}
}

// next waits for the next call.
func (f *fakeContainer) next(t *testing.T) call {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no probe ran")
		return call{}
	}
}

// probeSpec is an exec probe running cmd, with the given thresholds and numbers.
func probeSpec(cmd string, period, initialDelay, success, failure int32) *corev1.Probe {
	p := execProbeSpec(cmd)
	p.PeriodSeconds = period
	p.InitialDelaySeconds = initialDelay
	p.SuccessThreshold = success
	p.FailureThreshold = failure
	return p
}

// receive waits for the next value on ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		var zero T
		t.Fatalf("nothing received on %T", ch)
		return zero
	}
}

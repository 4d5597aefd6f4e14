package backoff

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var keyedEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// crashLoop is the kubelet's crash-loop numbers: 10 s doubling to 5 min, reset after 10 min.
func newCrashLoop() (*Keyed[string], *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(keyedEpoch)
	return NewKeyed[string](Policy{Initial: 10 * time.Second, Max: 5 * time.Minute}, 10*time.Minute, clk), clk
}

func TestKeyedDoublesPerKeyUpToMax(t *testing.T) {
	b, clk := newCrashLoop()
	var got []time.Duration
	for range 7 {
		got = append(got, b.Next("a", clk.Now()))
		clk.Step(time.Second) // failing again soon: no quiet period
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if d := b.Next("b", clk.Now()); d != 10*time.Second {
		t.Errorf("another key's first failure: %v, want the initial delay", d)
	}
	if d := b.Get("a"); d != 5*time.Minute {
		t.Errorf("Get(a) = %v after b failed, want a's own 5m", d)
	}
	if d := b.Get("never"); d != 0 {
		t.Errorf("Get of a key that never failed: %v, want 0", d)
	}
}

func TestKeyedUntilIsTheRecordPlusTheDelay(t *testing.T) {
	b, clk := newCrashLoop()
	if u := b.Until("a"); !u.IsZero() {
		t.Fatalf("Until of a key that never failed: %v, want zero", u)
	}
	b.Next("a", clk.Now().Add(-time.Minute)) // the failure happened before it was seen
	if u := b.Until("a"); !u.Equal(keyedEpoch.Add(10 * time.Second)) {
		t.Errorf("Until = %v, want the record plus 10s", u)
	}
}

func TestKeyedStartsOverAfterAQuietPeriod(t *testing.T) {
	b, clk := newCrashLoop()
	b.Next("a", clk.Now())
	b.Next("a", clk.Now()) // 20s
	recorded := clk.Now()

	if d := b.Next("a", recorded.Add(10*time.Minute-time.Nanosecond)); d != 40*time.Second {
		t.Errorf("failure just short of 10 min after the last record: %v, want doubled 40s", d)
	}
	recorded = clk.Now()
	if d := b.Next("a", recorded.Add(10*time.Minute)); d != 10*time.Second {
		t.Errorf("failure 10 min after the last record: %v, want the initial delay again", d)
	}
}

func TestKeyedResetForgetsTheKey(t *testing.T) {
	b, clk := newCrashLoop()
	b.Next("a", clk.Now())
	b.Next("a", clk.Now())
	b.Reset("a")
	if d := b.Get("a"); d != 0 {
		t.Errorf("after Reset, Get = %v, want 0", d)
	}
	if d := b.Next("a", clk.Now()); d != 10*time.Second {
		t.Errorf("after Reset, Next = %v, want the initial delay", d)
	}
}

func TestKeyedGCDropsOnlyQuietKeys(t *testing.T) {
	b, clk := newCrashLoop()
	b.Next("old", clk.Now())
	clk.Step(6 * time.Minute)
	b.Next("recent", clk.Now())
	clk.Step(4 * time.Minute) // old: quiet 10 min; recent: 4 min
	b.GC()
	if d := b.Get("old"); d != 0 {
		t.Errorf("a key quiet for the reset period survived GC (delay %v)", d)
	}
	if d := b.Get("recent"); d != 10*time.Second {
		t.Errorf("a key that failed 4 min ago was collected (delay %v)", d)
	}
}

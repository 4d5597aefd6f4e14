package backoff

import (
	"testing"
	"time"
)

func TestDelaysDoubleUpToMaxAndReset(t *testing.T) {
	d := Policy{Initial: 100 * time.Millisecond, Max: time.Second}.Start()
	var got []time.Duration
	for range 6 {
		got = append(got, d.Next())
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", got, want)
		}
	}
	d.Reset()
	if n := d.Next(); n != 100*time.Millisecond {
		t.Errorf("after Reset: %v, want the initial delay", n)
	}
}

func TestLimiterFollowsThePolicy(t *testing.T) {
	l := Limiter[string](Policy{Initial: 10 * time.Millisecond, Max: 30 * time.Millisecond})
	var got []time.Duration
	for range 4 {
		got = append(got, l.When("a"))
	}
	if got[0] != 10*time.Millisecond || got[1] != 20*time.Millisecond || got[2] != 30*time.Millisecond || got[3] != 30*time.Millisecond {
		t.Fatalf("delays %v", got)
	}
	l.Forget("a")
	if d := l.When("a"); d != 10*time.Millisecond {
		t.Errorf("after Forget: %v", d)
	}
}

func TestWaitBackoffReachesMax(t *testing.T) {
	b := Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second}.WaitBackoff(0)
	var last time.Duration
	for range 10 {
		last = b.Step()
	}
	if last != 2*time.Second {
		t.Errorf("after 10 steps the delay is %v, want the cap 2s", last)
	}
}

package records

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestUnrecordedLineRoundTrips(t *testing.T) {
	dir := t.TempDir()
	if st, _, err := LastUnrecorded(dir); st != nil || err != nil {
		t.Fatalf("no log: %v, %v", st, err)
	}
	end := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	first := &State{State: StateExited, Pid: 42, FinishedAt: end, ExitCode: 3}
	second := &State{State: StateExited, Pid: 42, FinishedAt: end, ExitCode: 7}
	log := "a crash trace\n" + UnrecordedLine(first, errors.New("no space left on device")) +
		"vk-static-supervisor: state not recorded: {broken\n" + UnrecordedLine(second, errors.New("input/output error"))
	if err := os.WriteFile(filepath.Join(dir, SupervisorLogFile), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	st, why, err := LastUnrecorded(dir)
	if err != nil || st == nil {
		t.Fatalf("LastUnrecorded: %v, %v", st, err)
	}
	if st.ExitCode != 7 || st.State != StateExited || !st.FinishedAt.Equal(end) || why != "input/output error" {
		t.Errorf("got %+v, %q; want the last line's state", st, why)
	}
}

func TestWriteStateGivesUpWithTheError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	start := time.Now()
	if err := WriteState(dir, &State{State: StateRunning}); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("gave up after %v: the write is tried again for about 1.5 s", d)
	}
	dir = t.TempDir()
	if err := WriteState(dir, &State{State: StateRunning, Pid: 1}); err != nil {
		t.Fatal(err)
	}
	if st, err := ReadState(dir); err != nil || st.Pid != 1 {
		t.Fatalf("ReadState: %+v, %v", st, err)
	}
}

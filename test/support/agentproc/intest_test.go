package agentproc

import (
	"os"
	"path/filepath"
	"testing"
)

// An agent that exits at its start because its port was taken is told from one that fails for
// another reason, from this run's log lines only (a restart appends to the log).
func TestLostPortRace(t *testing.T) {
	script := func(body string) string {
		path := filepath.Join(t.TempDir(), "agent")
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dir := t.TempDir()
	lost, err := Start(Config{Binary: script(`echo "listen tcp 127.0.0.1:1234: bind: address already in use" >&2; exit 1`), Dir: dir, Node: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if !lost.lostPortRace() {
		t.Error("an agent whose port was taken: not a lost race")
	}
	other, err := Start(Config{Binary: script(`echo "some other failure" >&2; exit 1`), Dir: dir, Node: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if other.lostPortRace() {
		t.Error("an agent that failed otherwise, after one that lost a race in the same log: a lost race")
	}
}

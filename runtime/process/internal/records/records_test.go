package records

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteJSONNew leaves the record readable under its name, with the records' mode, and no
// temporary file; a write that cannot be renamed into place leaves nothing behind.
func TestWriteJSONNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := WriteJSONNew(path, &State{State: StateRunning, Pid: 42}); err != nil {
		t.Fatal(err)
	}
	var st State
	if err := ReadJSON(path, &st); err != nil || st.Pid != 42 || st.State != StateRunning {
		t.Fatalf("read back %+v, %v", st, err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v, %v", info, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("only the record: %v", entries)
	}

	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONNew(blocked, &State{}); err == nil {
		t.Fatal("a rename over a directory succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("the record and the directory only, no temporary file: %v", entries)
	}
}

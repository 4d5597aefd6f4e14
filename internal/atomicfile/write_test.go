package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	require.NoError(t, WriteFile(path, []byte("old"), 0o600))
	require.NoError(t, WriteFile(path, []byte("new"), 0o640))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the record: the temporary file was renamed")
}

// A write that cannot complete leaves the old record as it was and no temporary file.
func TestWriteFileFailureKeepsTheOldRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	require.NoError(t, WriteFile(path, []byte("old"), 0o600))
	// A directory in the way of the rename: the data was written, the rename fails.
	blocked := filepath.Join(dir, "blocked")
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "child"), 0o700))
	assert.Error(t, WriteFile(blocked, []byte("new"), 0o600))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(data))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"record.json", "blocked"}, names, "no temporary file left")

	assert.Error(t, WriteFile(filepath.Join(dir, "missing", "record.json"), nil, 0o600))
}

func TestSyncDir(t *testing.T) {
	assert.NoError(t, SyncDir(t.TempDir()))
	assert.Error(t, SyncDir(filepath.Join(t.TempDir(), "missing")))
}

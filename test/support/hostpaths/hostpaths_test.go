package hostpaths

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMissingDirsAndRemoveDirs(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var", "log"), 0o755))
	paths := []string{filepath.Join(root, "var", "lib", "kubelet"), filepath.Join(root, "var", "log", "containers"), filepath.Join(root, "var", "log")}

	missing := MissingDirs(paths)
	assert.Equal(t, []string{filepath.Join(root, "var", "lib"), filepath.Join(root, "var", "log", "containers")}, missing)

	for _, p := range paths {
		require.NoError(t, os.MkdirAll(p, 0o755))
	}
	require.NoError(t, RemoveDirs(missing))
	for _, d := range missing {
		assert.NoDirExists(t, d)
	}
	assert.DirExists(t, filepath.Join(root, "var", "log"), "it was there before")
}

// Something of someone else's below a directory stops its removal.
func TestRemoveDirsKeepsFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kubelet")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "f"), nil, 0o644))
	assert.ErrorContains(t, RemoveDirs([]string{dir}), "holds f")
	assert.FileExists(t, filepath.Join(dir, "sub", "f"))
	assert.NoError(t, RemoveDirs([]string{filepath.Join(dir, "gone")}))
}

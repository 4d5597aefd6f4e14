package containerlog

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/containerlog/logwriter"
)

// newTestWriter writes a log for the reader to read, as a supervisor would.
func newTestWriter(t *testing.T, opts logwriter.Options) (*logwriter.Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pod", "container", "0.log")
	w, err := logwriter.New(path, opts)
	require.NoError(t, err)
	return w, path
}

package vm

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/cavaliergopher/cpio"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The initramfs holds init, busybox and each test at their places, the list of tests, the
// directories the kernel mounts on, and for a dynamically linked binary (this test binary with
// the race detector, say) its ELF interpreter and libraries at their paths on the host.
func TestInitramfs(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cfg := &Config{Init: self, Busybox: self, Tests: []Test{{Name: "t", Binary: self, Args: []string{"-test.v"}}}}
	r, err := newInitramfs(cfg)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, r.write(&buf))

	files := map[string][]byte{}
	dirs := map[string]bool{}
	zr, err := gzip.NewReader(&buf)
	require.NoError(t, err)
	cr := cpio.NewReader(zr)
	for {
		hdr, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if hdr.Mode.IsDir() {
			dirs["/"+hdr.Name] = true
			continue
		}
		data, err := io.ReadAll(cr)
		require.NoError(t, err)
		files["/"+hdr.Name] = data
	}
	for _, p := range []string{"/init", "/bin/busybox", BinaryPath("t")} {
		assert.Contains(t, files, p)
	}
	for _, d := range []string{"/dev", "/proc", "/sys", "/tmp", "/tests", "/bin"} {
		assert.True(t, dirs[d], "directory %s", d)
	}
	var listed []Test
	require.NoError(t, json.Unmarshal(files[TestsFile], &listed))
	assert.Equal(t, []Test{{Name: "t", Args: []string{"-test.v"}}}, listed)

	f, err := elf.Open(self)
	require.NoError(t, err)
	defer f.Close()
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			interp, _ := io.ReadAll(p.Open())
			assert.Contains(t, files, string(bytes.TrimRight(interp, "\x00")), "the interpreter")
		}
	}
	for _, lib := range libs {
		found := false
		for name := range files {
			found = found || name == "/lib/x86_64-linux-gnu/"+lib || name == "/usr/lib/x86_64-linux-gnu/"+lib || name == "/lib64/"+lib
		}
		assert.True(t, found, "library %s", lib)
	}
}

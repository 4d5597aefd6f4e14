package mounts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestUnder(t *testing.T) {
	const mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
100 22 8:1 /w/n1/root /w/n1/root rw,relatime shared:50 - ext4 /dev/vda rw
101 100 0:50 / /w/n1/root/pods/u1/volumes/kubernetes.io~projected/token rw - tmpfs tmpfs rw
102 22 8:1 /w/n1/root-other /w/n1/root-other rw - ext4 /dev/vda rw
103 100 0:51 / /w/n1/root/with\040space rw - tmpfs tmpfs rw
104 100 8:1 /w/n1/root /w/n1/root rw,relatime shared:51 - ext4 /dev/vda rw
`
	got, err := under(strings.NewReader(mountinfo), "/w/n1/root/")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/w/n1/root/pods/u1/volumes/kubernetes.io~projected/token",
		"/w/n1/root/with space",
		"/w/n1/root", "/w/n1/root",
	}, got)
}

// Under the root is every mount point.
func TestUnderRoot(t *testing.T) {
	const mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:5 / /dev rw - devtmpfs udev rw
24 23 0:6 / /dev/pts rw - devpts devpts rw
`
	got, err := under(strings.NewReader(mountinfo), "/")
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/pts", "/dev", "/"}, got)
}

func TestUnescape(t *testing.T) {
	assert.Equal(t, `a b\c`, Unescape(`a\040b\134c`))
	assert.Equal(t, `tail\04`, Unescape(`tail\04`))
	assert.Equal(t, "plain", Unescape("plain"))
}

// Nothing is mounted below a new directory: nothing to detach.
func TestUnmountUnderNothing(t *testing.T) {
	assert.NoError(t, UnmountUnder(t.TempDir()))
}

// RemoveAll keeps a directory below which something is mounted, and what the mount holds.
func TestRemoveAllStopsAtAMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting tmpfs needs root")
	}
	dir := t.TempDir()
	mnt := filepath.Join(dir, "a", "mnt")
	require.NoError(t, os.MkdirAll(mnt, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a", "beside"), nil, 0o644))
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mounting tmpfs is not permitted here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "held"), []byte("h"), 0o644))

	err := RemoveAll(dir)
	require.ErrorIs(t, err, ErrStillMounted)
	assert.ErrorContains(t, err, mnt)
	assert.FileExists(t, filepath.Join(mnt, "held"))
	assert.FileExists(t, filepath.Join(dir, "a", "beside"), "nothing removed")

	require.NoError(t, unix.Unmount(mnt, 0))
	require.NoError(t, RemoveAll(dir))
	assert.NoDirExists(t, dir)
}

// Nothing is mounted in another namespace below a fresh directory.
func TestElsewhere(t *testing.T) {
	points, err := Elsewhere(t.TempDir())
	require.NoError(t, err)
	assert.Empty(t, points)
}

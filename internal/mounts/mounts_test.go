package mounts

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestUnescape(t *testing.T) {
	assert.Equal(t, `a b\c`, Unescape(`a\040b\134c`))
	assert.Equal(t, `tail\04`, Unescape(`tail\04`))
	assert.Equal(t, "plain", Unescape("plain"))
}

// Nothing is mounted below a new directory: nothing to detach.
func TestUnmountUnderNothing(t *testing.T) {
	assert.NoError(t, UnmountUnder(t.TempDir()))
}

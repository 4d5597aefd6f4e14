package app

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The certificate flags: kubelet defaults, and the combinations that cannot work refused with
// the flag named.
func TestCertificateFlags(t *testing.T) {
	o, err := parse(t, "--root-dir", "/r")
	require.NoError(t, err)
	assert.True(t, o.RotateCertificates, "--rotate-certificates defaults to true")
	assert.False(t, o.RotateServerCertificates)
	assert.Equal(t, filepath.Join("/r", "pki"), o.certDir(), "--cert-dir defaults to <root-dir>/pki")

	o, err = parse(t, "--root-dir", "/r", "--cert-dir", "/c", "--kubeconfig", "/k", "--bootstrap-kubeconfig", "/b", "--rotate-server-certificates")
	require.NoError(t, err)
	assert.Equal(t, "/c", o.certDir())

	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--bootstrap-kubeconfig", "/b"}, "--bootstrap-kubeconfig: needs --kubeconfig"},
		{[]string{"--rotate-server-certificates"}, "--rotate-server-certificates: needs --kubeconfig"},
	} {
		_, err := parse(t, tc.args...)
		assert.ErrorContains(t, err, tc.flag, "%v", tc.args)
	}
}

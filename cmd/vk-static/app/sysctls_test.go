package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllowedUnsafeSysctlsFlag(t *testing.T) {
	o, err := parse(t, "--allowed-unsafe-sysctls", "kernel.msg*,net.core.somaxconn")
	require.NoError(t, err)
	assert.Equal(t, []string{"kernel.msg*", "net.core.somaxconn"}, o.AllowedUnsafeSysctls)

	_, err = parse(t, "--allowed-unsafe-sysctls", "vm.swappiness")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--allowed-unsafe-sysctls")
	assert.Contains(t, err.Error(), `the sysctls "vm.swappiness" are not known to be namespaced`)
}

package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSupervisorBeside(t *testing.T) {
	withSupervisor := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(withSupervisor, supervisorBinaryName), nil, 0o755))
	for _, tc := range []struct {
		name, exe, want string
	}{
		{name: "installed beside the agent", exe: filepath.Join(withSupervisor, "vk-static"), want: filepath.Join(withSupervisor, supervisorBinaryName)},
		{name: "not there: the agent re-executes itself", exe: filepath.Join(t.TempDir(), "vk-static"), want: ""},
		{name: "executable unknown", exe: "", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, supervisorBeside(tc.exe))
		})
	}
}

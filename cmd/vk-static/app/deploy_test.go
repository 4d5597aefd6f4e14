package app

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/deploy"
)

// deploy/vk-static.service starts this binary with flags it has and values it accepts (parsed
// and validated as run does, short of starting), serving the kubelet API to the API server.
func TestSystemdUnitCommandLine(t *testing.T) {
	args, err := deploy.ExecStart()
	require.NoError(t, err)
	require.NotEmpty(t, args)
	assert.Equal(t, "vk-static", filepath.Base(args[0]))
	// What run does before it starts the agent.
	o := defaultOptions()
	fs := o.agentFlagSet(io.Discard, io.Discard)
	require.NoError(t, fs.Parse(args[1:]), "%v", args)
	assert.Zero(t, fs.NArg(), "arguments that are not flags: %v", fs.Args())
	require.NoError(t, o.validate())
	api, why := o.kubeletAPI()
	require.Empty(t, why)
	assert.Equal(t, 10250, api.Port)
	assert.NotEmpty(t, api.ClientCAFile, "the API server's kubelet client certificate authenticates")
}

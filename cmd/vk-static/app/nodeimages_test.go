package app

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/node"
)

// --node-status-max-images reaches the agent's node controller: the kubelet's 50 by default.
func TestNodeStatusMaxImagesReachesTheAgent(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int32
	}{
		{want: node.DefaultNodeStatusMaxImages},
		{args: []string{"--node-status-max-images", "-1"}, want: -1},
		{args: []string{"--node-status-max-images", "7"}, want: 7},
	} {
		o, err := parse(t, append([]string{"--hostname-override", "node-a", "--root-dir", t.TempDir()}, tc.args...)...)
		require.NoError(t, err)
		cfg, _, err := agentConfig(context.Background(), o, prometheus.NewRegistry())
		require.NoError(t, err)
		require.NotNil(t, cfg.NodeStatusMaxImages, "%v", tc.args)
		assert.Equal(t, tc.want, *cfg.NodeStatusMaxImages, "%v", tc.args)
	}
}

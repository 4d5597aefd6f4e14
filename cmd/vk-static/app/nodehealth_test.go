package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
)

func TestNodeHealthFlags(t *testing.T) {
	o, err := parse(t)
	require.NoError(t, err)
	var cfg lifecycle.Config
	o.applyNodeHealth(&cfg)
	assert.Equal(t, 5*time.Second, cfg.RuntimeStatusPeriod)
	assert.Equal(t, 30*time.Second, cfg.RuntimeStatusThreshold)
	require.NotNil(t, cfg.Eviction)
	assert.Len(t, cfg.Eviction.Thresholds, 5, "the kubelet's default hard thresholds")
	assert.Equal(t, 5*time.Minute, cfg.Eviction.PressureTransitionPeriod)
	assert.Zero(t, cfg.Eviction.MaxPodGracePeriod, "the kubelet's default")

	o, err = parse(t, "--eviction-hard", "nodefs.available<1Gi", "--eviction-soft", "memory.available<2Gi",
		"--eviction-soft-grace-period", "memory.available=1m", "--eviction-pressure-transition-period", "30s",
		"--eviction-max-pod-grace-period", "20")
	require.NoError(t, err)
	o.applyNodeHealth(&cfg)
	assert.Equal(t, 20*time.Second, cfg.Eviction.MaxPodGracePeriod)
	require.Len(t, cfg.Eviction.Thresholds, 2, "--eviction-hard replaces the defaults")
	assert.Equal(t, "nodefs.available<1Gi", cfg.Eviction.Thresholds[0].String())
	assert.Equal(t, time.Minute, cfg.Eviction.Thresholds[1].GracePeriod)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--eviction-hard", "memory.free<1Gi"}, "--eviction-hard: unsupported eviction signal memory.free"},
		{[]string{"--eviction-soft", "memory.available<1Gi"}, "--eviction-soft-grace-period: grace period must be specified for the soft eviction threshold memory.available"},
		{[]string{"--eviction-minimum-reclaim", "memory.available=-1Gi"}, "--eviction-minimum-reclaim: negative eviction minimum reclaim specified for memory.available"},
		{[]string{"--eviction-max-pod-grace-period", "-1"}, "--eviction-max-pod-grace-period: must not be negative, got -1"},
		{[]string{"--runtime-status-threshold", "1s"}, "--runtime-status-threshold: 1s is shorter than --runtime-status-period 5s"},
	} {
		_, err := parse(t, c.args...)
		if assert.Error(t, err, "%v", c.args) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

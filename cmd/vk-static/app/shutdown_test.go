package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/nodeshutdown"
)

// The kubelet's graceful shutdown fields reach the lifecycle's node shutdown manager; without
// them there is none, and invalid ones are refused naming the field.
func TestShutdownConfig(t *testing.T) {
	const header = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	o, err := parse(t, "--config", writeFile(t, "c.yaml", header+"shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n"))
	require.NoError(t, err)
	cfg := lifecycleConfig(o, "node-a", nil)
	require.NotNil(t, cfg.Shutdown)
	assert.Equal(t, []nodeshutdown.PriorityGracePeriod{{Priority: 0, GracePeriodSeconds: 20}, {Priority: 2000000000, GracePeriodSeconds: 10}},
		nodeshutdown.Groups(*cfg.Shutdown))

	o, err = parse(t, "--config", writeFile(t, "c.yaml", header+`shutdownGracePeriodByPodPriority:
- {priority: 100000, shutdownGracePeriodSeconds: 10}
- {priority: 0, shutdownGracePeriodSeconds: 60}
`))
	require.NoError(t, err)
	cfg = lifecycleConfig(o, "node-a", nil)
	require.NotNil(t, cfg.Shutdown)
	assert.Equal(t, []nodeshutdown.PriorityGracePeriod{{Priority: 0, GracePeriodSeconds: 60}, {Priority: 100000, GracePeriodSeconds: 10}},
		nodeshutdown.Groups(*cfg.Shutdown))
	assert.Equal(t, []kubeletv1beta1.ShutdownGracePeriodByPodPriority{{Priority: 100000, ShutdownGracePeriodSeconds: 10}, {Priority: 0, ShutdownGracePeriodSeconds: 60}},
		o.kubeletConfiguration().ShutdownGracePeriodByPodPriority, "/configz shows them as given")

	o, err = parse(t, "--config", writeFile(t, "c.yaml", header))
	require.NoError(t, err)
	assert.Nil(t, lifecycleConfig(o, "node-a", nil).Shutdown, "no grace period: the host's shutdown is left alone")

	for config, want := range map[string]string{
		"shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n":                                              "shutdownGracePeriodCriticalPods 20s must be <= shutdownGracePeriod 10s",
		"shutdownGracePeriod: 500ms\n":                                                                                  "shutdownGracePeriod 500ms must be either zero or otherwise >= 1 sec",
		"shutdownGracePeriod: 30s\nshutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: 30}]\n": "cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod",
		"shutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: -5}]\n":                           "shutdownGracePeriodByPodPriority[0].shutdownGracePeriodSeconds -5 must not be negative",
	} {
		_, err := parse(t, "--config", writeFile(t, "c.yaml", header+config))
		if assert.Error(t, err, config) {
			assert.Contains(t, err.Error(), "--config ")
			assert.Contains(t, err.Error(), want)
		}
	}
}

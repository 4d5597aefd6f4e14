package cri_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/cri"
)

// containerd runs a sandbox with the runtime its RuntimeClass's handler names (runc, which the
// test's containerd configures), and refuses one whose handler it has not, with its own
// message, which the lifecycle's FailedCreatePodSandBox event carries.
func TestSandboxRuntimeHandler(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, cri.Config{})
	sandbox := func(name, handler string) (string, error) {
		pod := testPod(name, "unused")
		return rt.RunSandbox(ctx, &lifecycle.SandboxConfig{
			PodUID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Hostname: pod.Name,
			HostNetwork: true, LogDirectory: filepath.Join(t.TempDir(), "logs"), Pod: pod, RuntimeHandler: handler,
			Labels: map[string]string{lifecycle.LabelPodUID: string(pod.UID), lifecycle.LabelPodName: pod.Name, lifecycle.LabelPodNamespace: pod.Namespace},
		})
	}

	id, err := sandbox("runc", "runc")
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, rt.StopSandbox(ctx, id))
		assert.NoError(t, rt.RemoveSandbox(ctx, id))
	})
	found := listedSandbox(t, rt, id)
	require.NotNil(t, found)
	assert.Equal(t, lifecycle.SandboxReady, found.State)

	_, err = sandbox("kata", "kata")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no runtime for "kata" is configured`)
}

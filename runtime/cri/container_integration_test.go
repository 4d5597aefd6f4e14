package cri_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/testimage"
)

const logImage = "localhost/test/cri-log:1"

func TestContainerRunsLogsAndStops(t *testing.T) {
	ctx := context.Background()
	importImage(t, logImage, testimage.Options{Cmd: []string{"log", "--every", "50ms"}})
	rt := newRuntime(t, cri.Config{})
	assert.Equal(t, "containerd", rt.Name())
	pod := testPod("logs", logImage)
	sandboxID, sandbox := sandboxFor(t, rt, pod)

	cfg := containerFor(t, rt, sandbox)
	id, err := rt.CreateContainer(ctx, sandboxID, cfg)
	require.NoError(t, err)
	require.NoError(t, rt.StartContainer(ctx, id))
	st := waitFor(t, rt, id, func(s *lifecycle.ContainerStatus) bool { return s.State == lifecycle.ContainerRunning })
	assert.Equal(t, "main", st.Name)
	assert.Equal(t, cfg.LogPath, st.LogPath, "LogPath absolute, as the lifecycle gave it")
	assert.Equal(t, cfg.ImageRef, st.ImageRef)
	assert.Equal(t, string(pod.UID), st.Labels[lifecycle.LabelPodUID])
	assert.NotContains(t, st.Labels, cri.LabelManaged, "the runtime's own label is not the lifecycle's")
	assert.False(t, st.StartedAt.IsZero())
	waitForLog(t, cfg.LogPath, " stdout F tick 1 from ") // the CRI log format

	found := listedSandbox(t, rt, sandboxID)
	require.NotNil(t, found, "sandbox listed")
	assert.Equal(t, lifecycle.SandboxReady, found.State)
	assert.Equal(t, pod.UID, found.PodUID)
	assert.Empty(t, found.IPs, "host network: the node's addresses")

	listed := listedContainer(t, rt, id)
	require.NotNil(t, listed)
	assert.Equal(t, sandboxID, listed.SandboxID)

	stats, err := rt.ContainerStats(ctx, id)
	require.NoError(t, err)
	assert.NotZero(t, stats.MemoryWorkingSetBytes)

	start := time.Now()
	require.NoError(t, rt.StopContainer(ctx, id, 10*time.Second))
	assert.Less(t, time.Since(start), 5*time.Second, "the workload ends on SIGTERM, well within its grace")
	st = waitFor(t, rt, id, func(s *lifecycle.ContainerStatus) bool { return s.State == lifecycle.ContainerExited })
	assert.Equal(t, int32(0), st.ExitCode, "SIGTERM handled")
	assert.Empty(t, st.Reason, "an ordinary exit has no reason")
	_, err = os.Stat(cfg.LogPath)
	assert.NoError(t, err, "the log stays")
}

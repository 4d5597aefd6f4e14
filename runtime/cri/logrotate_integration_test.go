package cri_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/testimage"
)

func TestLogRotationReopensTheRuntimesLog(t *testing.T) {
	ctx := context.Background()
	const image = "localhost/test/cri-chatty:1"
	importImage(t, image, testimage.Options{Cmd: []string{"log", "--every", "5ms"}})
	rt := newRuntime(t, cri.Config{LogMaxSize: 1024, LogMaxFiles: 3})
	sandboxID, sandbox := sandboxFor(t, rt, testPod("rotate", image))
	_, cfg := runContainer(t, rt, sandboxID, sandbox)
	rotator := rt.LogRotator()
	require.NotNil(t, rotator)

	rotated := func() []string {
		m, err := filepath.Glob(cfg.LogPath + ".*")
		require.NoError(t, err)
		return m
	}
	for rotations := 0; rotations < 4; rotations++ {
		require.Eventually(t, func() bool {
			info, err := os.Stat(cfg.LogPath)
			return err == nil && info.Size() >= 1024
		}, 10*time.Second, 10*time.Millisecond, "the runtime writes the (reopened) log")
		require.NoError(t, rotator.RotateOnce(ctx))
		assert.LessOrEqual(t, len(rotated()), 2, "3 files kept, the current one included")
	}
	assert.Len(t, rotated(), 2)
	assert.Nil(t, newRuntime(t, cri.Config{}).LogRotator(), "no size, no rotation")
}

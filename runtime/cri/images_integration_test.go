package cri_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

func TestPullFromTheLocalRegistryAndImageGC(t *testing.T) {
	ctx := context.Background()
	reg, err := testimage.StartRegistry(ctx)
	require.NoError(t, err)
	defer reg.Close()
	inUse, err := testimage.Build(testimage.Options{Cmd: []string{"log", "--every", "50ms"}, Marker: "pulled, in use\n"})
	require.NoError(t, err)
	unused, err := testimage.Build(testimage.Options{Marker: "pulled, unused\n"})
	require.NoError(t, err)
	inUseRef, err := reg.Push(ctx, "test/in-use:1", inUse)
	require.NoError(t, err)
	unusedRef, err := reg.Push(ctx, "test/unused:1", unused)
	require.NoError(t, err)

	rt := newRuntime(t, cri.Config{ImageGCHighThreshold: 1, ImageGCLowThreshold: 0})
	ref, err := rt.ImageRef(ctx, inUseRef)
	require.NoError(t, err)
	assert.Empty(t, ref, "not pulled yet")

	pod := testPod("pulled", inUseRef)
	sandboxID, sandbox := sandboxFor(t, rt, pod)
	pulled, err := rt.PullImage(ctx, inUseRef, nil, sandbox)
	require.NoError(t, err)
	ref, err = rt.ImageRef(ctx, inUseRef)
	require.NoError(t, err)
	assert.Equal(t, ref, pulled, "PullImage answers with ImageRef's ID")
	unusedID, err := rt.PullImage(ctx, unusedRef, &lifecycle.ImageAuth{Username: "u", Password: "p"}, nil)
	require.NoError(t, err)
	id, _ := runContainer(t, rt, sandboxID, sandbox)

	_, err = rt.PullImage(ctx, reg.Host()+"/test/missing:1", nil, sandbox)
	require.Error(t, err, "no such image in the registry")
	assert.Contains(t, err.Error(), "test/missing:1")

	// Any usage is above a 1 % threshold: everything unused goes, nothing in use.
	gc := rt.ImageGC()
	require.NotNil(t, gc)
	assert.Equal(t, testcontainerd.SandboxImage, gc.SandboxImage(ctx), "read from containerd's verbose status")
	_, _ = gc.Collect(ctx) // it cannot reach 0 %, which is an error
	ref, err = rt.ImageRef(ctx, unusedRef)
	require.NoError(t, err)
	assert.Empty(t, ref, "the unused image %s was removed", unusedID)
	ref, err = rt.ImageRef(ctx, inUseRef)
	require.NoError(t, err)
	assert.Equal(t, pulled, ref, "the image in use stays")
	ref, err = rt.ImageRef(ctx, testcontainerd.SandboxImage)
	require.NoError(t, err)
	assert.NotEmpty(t, ref, "the sandbox image stays")
	st, err := rt.ContainerStatus(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, lifecycle.ContainerRunning, st.State)
}

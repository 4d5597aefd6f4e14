package cri

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
)

// TestDeleteUnusedImages: the reclaim of an image filesystem under disk pressure removes every
// image no container uses, whatever the thresholds (image GC disabled here), keeping pinned
// ones and those of any container, exited ones included.
func TestDeleteUnusedImages(t *testing.T) {
	r, rs, is, _ := fakeRuntime(t, Config{ImageGCHighThreshold: 100})
	is.SetFakeImageSize(10)
	is.SetFakeImagePinned("pinned", true)
	is.SetFakeImages([]string{"a", "b", "used", "pinned"})
	rs.SetFakeContainers([]*critesting.FakeContainer{{ContainerStatus: runtimeapi.ContainerStatus{
		Id: "c", State: runtimeapi.ContainerState_CONTAINER_EXITED, Image: &runtimeapi.ImageSpec{Image: "used"}, ImageRef: "used",
	}}})
	require.NoError(t, r.DeleteUnusedImages(context.Background()))
	assert.NotContains(t, is.Images, "a")
	assert.NotContains(t, is.Images, "b")
	assert.Contains(t, is.Images, "used")
	assert.Contains(t, is.Images, "pinned")
}

// TestNewImagesOutliveTheMinimumAge: at start, on a disk above the high threshold, neither the
// image garbage collector nor the reclaim removes an image first seen less than
// ImageMinimumGCAge ago — one imported for a pod about to start — and both count the age from
// the first sight by either.
func TestNewImagesOutliveTheMinimumAge(t *testing.T) {
	ctx := context.Background()
	r, _, is, clk := fakeRuntime(t, Config{ImageGCHighThreshold: 85, ImageGCLowThreshold: 80, ImageMinimumGCAge: 2 * time.Minute})
	is.SetFakeImageSize(10)
	is.SetFakeImages([]string{"preloaded"})
	is.SetFakeFilesystemUsage([]*runtimeapi.FilesystemUsage{{FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/images"}}})
	gc := r.ImageGC()
	require.NotNil(t, gc)
	gc.capacity = func(string) (uint64, uint64, error) { return 100, 5, nil } // 95 % used

	freed, err := gc.Collect(ctx) // the agent's first collection, at start
	assert.Error(t, err, "nothing may be freed yet")
	assert.Zero(t, freed)
	require.NoError(t, r.DeleteUnusedImages(ctx))
	assert.Contains(t, is.Images, "preloaded", "first seen just now")

	clk.Step(time.Minute)
	is.SetFakeImages([]string{"preloaded", "imported"}) // another image arrives a minute later
	require.NoError(t, r.DeleteUnusedImages(ctx))
	assert.Contains(t, is.Images, "preloaded", "a minute old")

	clk.Step(time.Minute)
	require.NoError(t, r.DeleteUnusedImages(ctx))
	assert.NotContains(t, is.Images, "preloaded", "two minutes old, unused")
	assert.Contains(t, is.Images, "imported", "a minute old")

	clk.Step(time.Minute)
	freed, err = gc.Collect(ctx)
	assert.Equal(t, uint64(10), freed)
	assert.Error(t, err, "10 of the 15 bytes wanted")
	assert.NotContains(t, is.Images, "imported")
}

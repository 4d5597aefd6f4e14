package cri

import (
	"context"
	"testing"

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

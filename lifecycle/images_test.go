package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/vk-static/vk-static/provider"
)

// imageRuntime is the fake runtime with images, as CRI's.
type imageRuntime struct {
	*fakeRuntime
	images []provider.Image
	err    error
}

func (r imageRuntime) ListImages(context.Context) ([]provider.Image, error) { return r.images, r.err }

func TestListImagesIsTheRuntimes(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	images := []provider.Image{{ID: "sha256:1", RepoTags: []string{"busybox:1.36"}, Size: 4 << 20}}
	p, err := New(ctx, Config{Runtime: imageRuntime{fakeRuntime: newFakeRuntime(clk), images: images}, RuntimeName: "fake", RootDir: t.TempDir(), Clock: clk})
	require.NoError(t, err)
	got, err := p.ListImages(ctx)
	require.NoError(t, err)
	assert.Equal(t, images, got)

	refused := errors.New("connection refused")
	p, err = New(ctx, Config{Runtime: imageRuntime{fakeRuntime: newFakeRuntime(clk), err: refused}, RuntimeName: "fake", RootDir: t.TempDir(), Clock: clk})
	require.NoError(t, err)
	_, err = p.ListImages(ctx)
	assert.ErrorIs(t, err, refused)

	p, err = New(ctx, Config{Runtime: newFakeRuntime(clk), RuntimeName: "fake", RootDir: t.TempDir(), Clock: clk})
	require.NoError(t, err)
	got, err = p.ListImages(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "a runtime without images: the Node lists none")
}

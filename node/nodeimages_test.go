package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/provider/mock"
)

// fakeImageLister is a runtime's images, which a test sets, and how often they were listed.
type fakeImageLister struct {
	mu     sync.Mutex
	images []provider.Image
	err    error
	calls  int
}

func (f *fakeImageLister) set(images []provider.Image, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images, f.err = images, err
}

func (f *fakeImageLister) listed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// imageListingProvider is a mock.NodeProvider that is also a provider.NodeImageLister.
type imageListingProvider struct {
	*mock.NodeProvider
	images *fakeImageLister
}

func (p imageListingProvider) ListImages(context.Context) ([]provider.Image, error) {
	p.images.mu.Lock()
	defer p.images.mu.Unlock()
	p.images.calls++
	return p.images.images, p.images.err
}

func TestNodeImagesAsTheKubelet(t *testing.T) {
	img := func(id string, size int64, names ...string) provider.Image {
		return provider.Image{ID: id, Size: size, RepoTags: names}
	}
	for _, tc := range []struct {
		name      string
		images    []provider.Image
		maxImages int32
		want      []corev1.ContainerImage
	}{{
		name:      "largest first, the same size by ID, greatest first",
		images:    []provider.Image{img("a", 10, "small"), img("b", 30, "b"), img("c", 30, "c"), img("d", 20, "mid")},
		maxImages: DefaultNodeStatusMaxImages,
		want: []corev1.ContainerImage{
			{Names: []string{"c"}, SizeBytes: 30}, {Names: []string{"b"}, SizeBytes: 30},
			{Names: []string{"mid"}, SizeBytes: 20}, {Names: []string{"small"}, SizeBytes: 10},
		},
	}, {
		name:      "cut to the largest maxImages",
		images:    []provider.Image{img("a", 10, "small"), img("b", 30, "large"), img("d", 20, "mid")},
		maxImages: 2,
		want:      []corev1.ContainerImage{{Names: []string{"large"}, SizeBytes: 30}, {Names: []string{"mid"}, SizeBytes: 20}},
	}, {
		name:      "-1: all",
		images:    []provider.Image{img("a", 10, "small"), img("b", 30, "large")},
		maxImages: -1,
		want:      []corev1.ContainerImage{{Names: []string{"large"}, SizeBytes: 30}, {Names: []string{"small"}, SizeBytes: 10}},
	}, {
		name:      "0: none, an empty list",
		images:    []provider.Image{img("a", 10, "small")},
		maxImages: 0,
		want:      []corev1.ContainerImage{},
	}, {
		name:      "no images: an empty list",
		maxImages: DefaultNodeStatusMaxImages,
		want:      []corev1.ContainerImage{},
	}, {
		name: "digests then tags, five names at most",
		images: []provider.Image{{
			ID: "x", Size: 1,
			RepoTags:    []string{"r/x:1", "r/x:2", "r/x:3", "r/x:4"},
			RepoDigests: []string{"r/x@sha256:aa", "q/x@sha256:aa"},
		}},
		maxImages: DefaultNodeStatusMaxImages,
		want:      []corev1.ContainerImage{{Names: []string{"r/x@sha256:aa", "q/x@sha256:aa", "r/x:1", "r/x:2", "r/x:3"}, SizeBytes: 1}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := fmt.Sprint(tc.images)
			got := nodeImages(tc.images, tc.maxImages)
			assert.Equal(t, tc.want, got)
			assert.NotNil(t, got, "an empty list is written as one")
			assert.Equal(t, before, fmt.Sprint(tc.images), "the provider's list is not changed")
		})
	}
}

func TestNodeImagesDefaultCapIsTheKubelets(t *testing.T) {
	var images []provider.Image
	for i := range 60 {
		images = append(images, provider.Image{ID: fmt.Sprint(i), Size: int64(i), RepoTags: []string{fmt.Sprint("img", i)}})
	}
	got := nodeImages(images, DefaultNodeStatusMaxImages)
	require.Len(t, got, 50)
	assert.Equal(t, int64(59), got[0].SizeBytes)
	assert.Equal(t, int64(10), got[49].SizeBytes)
}

func TestWithNodeStatusMaxImagesValidates(t *testing.T) {
	c := &NodeController{}
	assert.Error(t, WithNodeStatusMaxImages(-2)(c))
	for _, n := range []int32{-1, 0, 50} {
		require.NoError(t, WithNodeStatusMaxImages(n)(c))
		assert.Equal(t, n, c.maxImages)
	}
}

// The images are listed once at the start and then once every status update interval — not
// for a status change — and a list that differs is written at once; a failed listing keeps
// the last list.
func TestNodeControllerListsImagesEveryStatusInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lister := &fakeImageLister{images: []provider.Image{{ID: "pause", Size: 300, RepoTags: []string{"pause:3.10"}}}}
		h := startControllerWith(t, harnessConfig{images: lister, opts: []NodeControllerOpt{WithNodeStatusMaxImages(1)}})
		synctest.Wait()
		assert.Equal(t, []corev1.ContainerImage{{Names: []string{"pause:3.10"}, SizeBytes: 300}}, h.node(t).Status.Images)
		assert.Equal(t, 1, lister.listed())

		// A provider's status report is written without listing the images.
		h.provider.ReportNodeStatus(&corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue}}}})
		synctest.Wait()
		assert.Equal(t, 1, lister.listed())

		lister.set([]provider.Image{{ID: "pause", Size: 300, RepoTags: []string{"pause:3.10"}}, {ID: "app", Size: 900, RepoTags: []string{"app:1"}}}, nil)
		h.step(testStatusInterval / 2)
		assert.Equal(t, 1, lister.listed(), "not before the interval")
		patches := h.count("nodes", "patch")
		h.step(testStatusInterval / 2)
		assert.Equal(t, 2, lister.listed())
		assert.Equal(t, patches+1, h.count("nodes", "patch"), "a new list is written at once")
		assert.Equal(t, []corev1.ContainerImage{{Names: []string{"app:1"}, SizeBytes: 900}}, h.node(t).Status.Images, "the largest, one image at most")

		lister.set(nil, errors.New("connection refused"))
		h.step(testStatusInterval)
		assert.Equal(t, 3, lister.listed())
		assert.Equal(t, []corev1.ContainerImage{{Names: []string{"app:1"}, SizeBytes: 900}}, h.node(t).Status.Images, "the last list is kept")

		lister.set(nil, nil)
		h.step(testStatusInterval)
		assert.Empty(t, h.node(t).Status.Images, "every image removed: an empty list")
	})
}

// A provider that lists no images leaves the images an earlier run wrote alone.
func TestNodeControllerWithoutImageListerKeepsImages(t *testing.T) {
	existing := desiredTestNode()
	existing.Status.Images = []corev1.ContainerImage{{Names: []string{"someone's"}, SizeBytes: 1}}
	h := startController(t, existing)
	assert.Equal(t, existing.Status.Images, h.node(t).Status.Images)
}

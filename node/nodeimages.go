package node

import (
	"cmp"
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/provider"
)

// The Node's status.images, as the kubelet's Images setter makes them: the runtime's images,
// largest first, at most nodeStatusMaxImages of them, each named by its digests then its tags,
// at most five names.
const (
	// DefaultNodeStatusMaxImages is how many images the Node lists at most (the kubelet's
	// nodeStatusMaxImages default); -1 lists them all.
	DefaultNodeStatusMaxImages int32 = 50
	// maxNamesPerImage is the kubelet's MaxNamesPerImageInNodeStatus.
	maxNamesPerImage = 5
)

// nodeImages is what status.images says of images: sorted by size, largest first (the same
// size: the greater ID first, as the kubelet's ByImageSize), cut to maxImages unless it is -1.
// The result is never nil, so that an empty list is written as one.
func nodeImages(images []provider.Image, maxImages int32) []corev1.ContainerImage {
	sorted := slices.Clone(images)
	slices.SortStableFunc(sorted, func(a, b provider.Image) int {
		if a.Size != b.Size {
			return cmp.Compare(b.Size, a.Size)
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if maxImages > -1 && int(maxImages) < len(sorted) {
		sorted = sorted[:maxImages]
	}
	out := make([]corev1.ContainerImage, 0, len(sorted))
	for _, img := range sorted {
		names := append(slices.Clone(img.RepoDigests), img.RepoTags...)
		if len(names) > maxNamesPerImage {
			names = names[:maxNamesPerImage]
		}
		out = append(out, corev1.ContainerImage{Names: names, SizeBytes: img.Size})
	}
	return out
}

// imagesLoop lists the provider's images at once and then at every status update interval,
// apart from the status loop so that a runtime slow to answer never delays a status write.
// A list that differs from the last one is written at once; a failed listing keeps the last
// list, as the kubelet's image cache does.
func (c *NodeController) imagesLoop(ctx context.Context, lister provider.NodeImageLister) {
	ticker := c.clock.NewTicker(c.statusUpdateInterval)
	defer ticker.Stop()
	for {
		c.listImages(ctx, lister)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		}
	}
}

func (c *NodeController) listImages(ctx context.Context, lister provider.NodeImageLister) {
	lctx, cancel := context.WithTimeout(ctx, c.statusUpdateInterval)
	images, err := lister.ListImages(lctx)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing the runtime's images failed; the Node keeps its last list")
		return
	}
	listed := nodeImages(images, c.maxImages)
	c.mu.Lock()
	changed := c.desired.Status.Images == nil || !apiequality.Semantic.DeepEqual(c.desired.Status.Images, listed)
	c.desired.Status.Images = listed
	c.mu.Unlock()
	if changed {
		kick(c.statusChanged)
	}
}

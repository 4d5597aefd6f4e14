package provider

import "context"

// NodeImageLister is implemented by a NodeProvider whose runtime keeps container images (CRI):
// the node controller lists them once every status update interval for the Node's
// status.images, as the kubelet's Images setter does, so the scheduler's ImageLocality can
// prefer nodes that already have a pod's images. A provider without images does not implement
// it, or returns none.
type NodeImageLister interface {
	// ListImages returns every image the runtime holds, in any order. It is never called on a
	// pod's path; it returns promptly when ctx ends.
	ListImages(ctx context.Context) ([]Image, error)
}

// Image is one image a runtime holds, as CRI's ListImages reports it.
type Image struct {
	// ID is the runtime's ID of the image; it orders images of the same size.
	ID string
	// RepoTags ("registry.k8s.io/pause:3.10") and RepoDigests ("registry.k8s.io/pause@sha256:…")
	// name the image.
	RepoTags    []string
	RepoDigests []string
	// Size is the image's size in bytes.
	Size int64
}

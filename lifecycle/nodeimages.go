package lifecycle

import (
	"context"

	"github.com/vk-static/vk-static/provider"
)

// ImageLister is implemented by a Runtime that keeps container images (CRI ListImages): the
// Node's status.images lists them, as the kubelet's does.
type ImageLister interface {
	// ListImages returns every image the runtime holds, in any order.
	ListImages(ctx context.Context) ([]provider.Image, error)
}

var _ provider.NodeImageLister = (*Provider)(nil)

// ListImages is the runtime's images, which the node controller lists every status update
// interval for the Node's status.images; a runtime that keeps none (processes) has none, and
// the Node lists none.
func (p *Provider) ListImages(ctx context.Context) ([]provider.Image, error) {
	if l, ok := p.rt.(ImageLister); ok {
		return l.ListImages(ctx)
	}
	return nil, nil
}

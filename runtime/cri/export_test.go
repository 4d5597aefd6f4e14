package cri

import "context"

// SandboxImage exposes the image the collector spares as the runtime's sandbox image.
func (gc *ImageGC) SandboxImage(ctx context.Context) string { return gc.sandboxImage(ctx) }

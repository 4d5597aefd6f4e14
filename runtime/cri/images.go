package cri

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider"
)

var _ lifecycle.ImageLister = (*Runtime)(nil)

// ImageRef is the runtime's ID for image (ImageStatus's id), "" when it is not present.
func (r *Runtime) ImageRef(ctx context.Context, image string) (string, error) {
	resp, err := r.is.ImageStatus(ctx, &runtimeapi.ImageSpec{Image: image}, false)
	if err != nil {
		return "", fmt.Errorf("image status of %s: %w", image, err)
	}
	return resp.GetImage().GetId(), nil
}

// PullImage pulls image with auth for the sandbox's pod and returns its ID.
func (r *Runtime) PullImage(ctx context.Context, image string, auth *lifecycle.ImageAuth, sandbox *lifecycle.SandboxConfig) (string, error) {
	var sc *runtimeapi.PodSandboxConfig
	if sandbox != nil {
		sc = podSandboxConfig(sandbox, r.cfg.SeccompProfileRoot)
	}
	var ac *runtimeapi.AuthConfig
	if auth != nil {
		ac = &runtimeapi.AuthConfig{
			Username: auth.Username, Password: auth.Password, Auth: auth.Auth,
			ServerAddress: auth.ServerAddress, IdentityToken: auth.IdentityToken, RegistryToken: auth.RegistryToken,
		}
	}
	ref, err := r.is.PullImage(ctx, &runtimeapi.ImageSpec{Image: image}, ac, sc)
	if err != nil {
		return "", fmt.Errorf("pull image %s: %w", image, err)
	}
	// CRI's PullImage answers with the image's reference as the runtime stores it; the
	// lifecycle compares it with ImageRef's ID, so ask for that.
	if id, err := r.ImageRef(ctx, image); err == nil && id != "" {
		return id, nil
	}
	return ref, nil
}

// ListImages is every image the runtime holds (CRI ListImages), for the Node's status.images.
func (r *Runtime) ListImages(ctx context.Context) ([]provider.Image, error) {
	images, err := r.is.ListImages(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	out := make([]provider.Image, 0, len(images))
	for _, img := range images {
		out = append(out, provider.Image{
			ID: img.GetId(), RepoTags: img.GetRepoTags(), RepoDigests: img.GetRepoDigests(), Size: int64(img.GetSize()),
		})
	}
	return out, nil
}

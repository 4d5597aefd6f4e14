package testimage

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is an OCI registry served in process on 127.0.0.1 over plain HTTP, its content in
// memory. containerd pulls from a 127.0.0.1 registry over HTTP with no configuration.
type Registry struct {
	server    *httptest.Server
	stopOnCtx func() bool
}

// StartRegistry serves an empty registry on a free 127.0.0.1 port until Close or until ctx is
// cancelled.
func StartRegistry(ctx context.Context) (*Registry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &Registry{server: httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))}
	r.stopOnCtx = context.AfterFunc(ctx, r.server.Close)
	return r, nil
}

// Host is the registry's host:port, the first component of the references it serves.
func (r *Registry) Host() string { return strings.TrimPrefix(r.server.URL, "http://") }

// Push uploads img as repository:tag on the registry (e.g. "test/web:1") and returns the
// reference to pull, "127.0.0.1:PORT/test/web:1".
func (r *Registry) Push(ctx context.Context, repoTag string, img v1.Image) (string, error) {
	ref := r.Host() + "/" + repoTag
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	return ref, nil
}

// Close stops serving and waits for the requests in flight.
func (r *Registry) Close() {
	r.stopOnCtx()
	r.server.Close()
}

package testimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Containerd is the containerd to import into: a *testcontainerd.Containerd.
type Containerd interface {
	// Address is containerd's socket path.
	Address() string
}

// CRINamespace is the containerd namespace of the images and containers of its CRI plugin.
const CRINamespace = "k8s.io"

// Import writes img as an image tarball named ref (e.g. "localhost/test/web:1") and imports it
// with ctr into c's CRI namespace, unpacked for its default snapshotter: the image is then in
// CRI's ImageStatus/ListImages under ref, and a pull of ref is not needed.
func Import(ctx context.Context, c Containerd, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	ctr, err := exec.LookPath("ctr")
	if err != nil {
		return fmt.Errorf("ctr (package containerd) not found: run `make testbin`: %w", err)
	}
	dir, err := os.MkdirTemp("", "vk-static-testimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	archive := filepath.Join(dir, "image.tar")
	if err := tarball.WriteToFile(archive, tag, img); err != nil {
		return fmt.Errorf("write image tarball for %s: %w", ref, err)
	}
	out, err := exec.CommandContext(ctx, ctr, "--address", c.Address(), "--namespace", CRINamespace,
		"images", "import", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w\n%s", ref, err, out)
	}
	return nil
}

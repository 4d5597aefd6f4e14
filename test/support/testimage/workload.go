package testimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// workloadPackage is the program every test image runs.
const workloadPackage = "github.com/vk-static/vk-static/test/support/testimage/workload"

// workloadLayer is the layer holding the compiled program, built once per test process: the
// compile takes about a second and every image of the process shares the layer (and so its
// digest: containerd stores it once). It is immutable once built.
var workloadLayer = sync.OnceValues(buildWorkloadLayer)

func buildWorkloadLayer() (v1.Layer, error) {
	dir, err := os.MkdirTemp("", "vk-static-testimage-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin, err := BuildWorkload(dir)
	if err != nil {
		return nil, err
	}
	program, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	return layerOf([]tarEntry{
		{name: "workload", mode: 0o755, data: program},
	})
}

// BuildWorkload compiles the workload program (static, for this machine) into dir/workload and
// returns its path: the images' program, and for tests whose containers are host processes (the
// process provider) a server, logger or sleeper that needs nothing installed on the host.
func BuildWorkload(dir string) (string, error) {
	bin := filepath.Join(dir, "workload")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, workloadPackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the test workload %s: %w\n%s", workloadPackage, err, out)
	}
	return bin, nil
}

// tarEntry is a file or a directory in a layer.
type tarEntry struct {
	name string
	mode int64
	dir  bool
	data []byte
}

// layerOf builds a gzip-compressed layer in memory. Entries carry no timestamps or owners, so
// the same content always has the same digest.
func layerOf(entries []tarEntry) (v1.Layer, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Typeflag: tar.TypeReg, Size: int64(len(e.data)), Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	compressed := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(compressed)), nil
	})
}

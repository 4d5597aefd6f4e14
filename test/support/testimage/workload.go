package testimage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
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
	return Layer([]LayerEntry{{Name: "workload", Mode: 0o755, Data: program}})
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

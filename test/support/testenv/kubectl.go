package testenv

import (
	"fmt"
	"os"
	"path/filepath"
)

// Kubectl returns the path of the kubectl that `make kubectl` (and `make testbin`) builds into
// the control plane's binary directory, from the same Kubernetes release as the API server. A
// missing kubectl is an error that says how to build it: tests that drive kubectl fail with it
// rather than skip.
func (e *Env) Kubectl() (string, error) {
	path := filepath.Join(e.bin, "kubectl")
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("kubectl missing in %s: run `make kubectl` (or set VK_STATIC_TESTBIN): %w", e.bin, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file: run `make kubectl` again", path)
	}
	return path, nil
}

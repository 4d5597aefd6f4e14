package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// DefaultPath is searched when the container's environment has no PATH: the one container
// runtimes give an image that sets none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lookPath finds name as the container would: in the PATH of its environment (not the
// supervisor's), a name with a slash as it is. The error for a name not found is exec's, so
// that the message reads as CRI runtimes': exec: "nope": executable file not found in $PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil // the kernel's execve judges it, relative to the working directory
	}
	path := DefaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, name)
		if fi, err := os.Stat(candidate); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

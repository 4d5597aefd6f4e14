package hostpaths

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/internal/mounts"
)

// Tmpfs is one path to hide and the tmpfs that hides it.
type Tmpfs struct {
	Path string
	// Mode is the tmpfs root's mode: what the program expects of the directory (etcd warns
	// about a data directory other than 0700).
	Mode os.FileMode
	// Size is tmpfs's size= option ("64m", "1g"): an upper bound, since tmpfs takes memory only
	// for what is written, but one that must hold what the program preallocates (etcd's 64 MB
	// write-ahead log segments).
	Size string
}

// Paths are the paths of masks: what MissingDirs is asked about before the namespace is made.
func Paths(masks []Tmpfs) []string {
	paths := make([]string, len(masks))
	for i, m := range masks {
		paths[i] = m.Path
	}
	return paths
}

// MissingDirs are, for each of paths that does not exist, its topmost missing ancestor (or
// itself): what Mask will create on the machine's filesystem and RemoveDirs removes
// afterwards. Call it before the run.
func MissingDirs(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		top := p
		for parent := filepath.Dir(top); parent != top; parent = filepath.Dir(top) {
			if _, err := os.Lstat(parent); err == nil {
				break
			}
			top = parent
		}
		out = append(out, top)
	}
	return out
}

// Mask mounts an empty tmpfs (nosuid, nodev) on each path, creating the directory if need be.
// It must run in a mount namespace of the run's own whose mounts do not propagate to the
// machine's (test/support/netns.Enter makes them private): the mounts go with that namespace.
func Mask(paths ...Tmpfs) error {
	for _, p := range paths {
		if err := os.MkdirAll(p.Path, 0o755); err != nil {
			return err
		}
		opts := fmt.Sprintf("mode=%04o,size=%s", p.Mode.Perm(), p.Size)
		if err := unix.Mount("tmpfs", p.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount a tmpfs (%s) on %s: %w", opts, p.Path, err)
		}
	}
	return nil
}

// RemoveDirs removes what Mask created (dirs from MissingDirs), once the namespace and its
// mounts are gone; they hold only what Mask created beneath them, which is empty on the
// machine's side. A directory another run's namespace still has a mount on (two runs at once
// both found it missing) is left to that run: removing it would detach the other run's tmpfs,
// and its programs would then write on the machine.
func RemoveDirs(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		if inUse, err := mounts.Elsewhere(d); err != nil || len(inUse) > 0 {
			errs = append(errs, err)
			continue
		}
		if err := removeEmptyTree(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeEmptyTree removes dir and the directories below it, all of which must be empty:
// anything else is not ours, and stays (os.Remove fails on it).
func removeEmptyTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			return fmt.Errorf("not removing %s: it holds %s", dir, e.Name())
		}
		if err := removeEmptyTree(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return os.Remove(dir)
}

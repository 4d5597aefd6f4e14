package mounts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Elsewhere lists the mount points at or below dir in mount namespaces other than this
// process's: read from one process of each (/proc/PID/mountinfo). A directory made on the
// machine to hold another namespace's mount (bench/kubelet's masked host paths) must not be
// removed while such a mount remains: removing it would detach that mount from under the
// namespace still using it.
func Elsewhere(dir string) ([]string, error) {
	own, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{own: true}
	var points []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		ns, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt"))
		if err != nil || seen[ns] {
			continue // gone meanwhile, or a namespace already read
		}
		seen[ns] = true
		f, err := os.Open(filepath.Join("/proc", e.Name(), "mountinfo"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("mount namespace %s: %w", ns, err)
		}
		found, err := under(f, dir)
		f.Close()
		if err != nil {
			return nil, err
		}
		points = append(points, found...)
	}
	return points, nil
}

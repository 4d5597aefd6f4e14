package mounts

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ErrStillMounted is wrapped by RemoveAll's error when something is mounted at or below the
// directory it was to remove.
var ErrStillMounted = errors.New("still mounted")

// RemoveAll is os.RemoveAll for a directory that must never be deleted through a mount: when
// anything is mounted at or below dir it removes nothing and returns an error wrapping
// ErrStillMounted that names the mounts. os.RemoveAll does not stop at mount points (a bind
// mount of a host directory is on the same device, so not even a device check would), and
// would delete what the mount shows. The caller decides what to do with the mounts — this
// detaches none: a mount the caller did not make is not its to undo.
func RemoveAll(dir string) error {
	points, err := Under(dir)
	if err != nil {
		return fmt.Errorf("remove %s: list its mounts: %w", dir, err)
	}
	if len(points) > 0 {
		return fmt.Errorf("remove %s: %w: %s", dir, ErrStillMounted, strings.Join(points, ", "))
	}
	return os.RemoveAll(dir)
}

package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinDir opens dir and returns /proc/self/fd/N, a name of it that the container's mounts
// cannot hide. The supervisor mounts the container's volumes in its own mount namespace and then
// keeps writing its records (state.json), binding its socket and rotating the log; a volume
// mounted over a parent of those directories — an emptyDir at /tmp with --root-dir under /tmp,
// at /var above /var/lib/vk-static — would hide them from every path lookup after the mounts,
// and the container would never be recorded as started. A descriptor opened before the mounts
// still reaches the directory, and /proc/self/fd/N resolves through it. The descriptor is
// close-on-exec (the workload does not get it) and is never closed: the supervisor uses the name
// until it exits.
func pinDir(dir string) (string, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return "/proc/self/fd/" + strconv.Itoa(fd), nil
}

// logDirMode is the mode of a log directory the supervisor creates, logwriter's own.
const logDirMode = 0o750

// pinFile returns a name for path through its pinned directory (pinDir), creating the directory
// if needed, as the log writer would.
func pinFile(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), logDirMode); err != nil {
		return "", fmt.Errorf("container log: %w", err)
	}
	dir, err := pinDir(filepath.Dir(path))
	if err != nil {
		return "", fmt.Errorf("container log: %w", err)
	}
	return filepath.Join(dir, filepath.Base(path)), nil
}

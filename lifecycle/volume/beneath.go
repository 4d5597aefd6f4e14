package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// openat2 is unix.Openat2; tests replace it to stand for a kernel without it (before 5.6).
var openat2 = unix.Openat2

// openBeneath opens rel, a path below the directory root whose symlinks resolveSubPath has
// already resolved and checked, without following any symlink: a component that is a symlink
// now was swapped in after the check (by a container that shares the volume), and is refused
// with an error wrapping ErrOutsideVolume. It returns an O_PATH descriptor of what it opened,
// which no later rename can change.
func openBeneath(root, rel string) (int, error) {
	if rel == "" {
		rel = "." // the subPath is the volume itself
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(rootFD)
	how := &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := openat2(rootFD, rel, how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EAGAIN):
			continue // a rename elsewhere meanwhile: the kernel asks to try again
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// No openat2 (before Linux 5.6), or a seccomp filter older than it, which may
			// answer EPERM (Docker's default profile before 20.10).
			return walkBeneath(rootFD, rel)
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
			return -1, fmt.Errorf("%w: a symbolic link appeared in %s after it was checked", ErrOutsideVolume, rel)
		default:
			return -1, &os.PathError{Op: "open", Path: rel, Err: err}
		}
	}
}

// walkBeneath is openBeneath where openat2 is missing: one component at a time, each opened
// with O_NOFOLLOW below the one before (a symlink is then opened as itself, and refused).
func walkBeneath(rootFD int, rel string) (int, error) {
	fd, err := unix.Dup(rootFD)
	if err != nil {
		return -1, err
	}
	walked := ""
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." {
			continue
		}
		walked = path.Join(walked, name)
		if name == ".." {
			unix.Close(fd)
			return -1, ErrOutsideVolume // never from resolveSubPath; not followed if it were
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: walked, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			return -1, fmt.Errorf("%w: %s became a symbolic link after it was checked", ErrOutsideVolume, walked)
		}
		fd = next
	}
	return fd, nil
}

// mkdirBeneath makes the directory name in parent, a path below root opened as openBeneath
// opens it, with mode perm whatever the umask, its setuid, setgid and sticky bits included.
func mkdirBeneath(root, parent, name string, perm fs.FileMode) error {
	dirFD, err := openBeneath(root, parent)
	if err != nil {
		return err
	}
	defer unix.Close(dirFD)
	if err := unix.Mkdirat(dirFD, name, uint32(perm.Perm())); err != nil {
		return err
	}
	// Opened again without following a symlink: what is there may have been swapped already,
	// and a chmod must not reach through it.
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	mode := uint32(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		mode |= unix.S_ISUID
	}
	if perm&fs.ModeSetgid != 0 {
		mode |= unix.S_ISGID
	}
	if perm&fs.ModeSticky != 0 {
		mode |= unix.S_ISVTX
	}
	return unix.Fchmod(fd, mode)
}

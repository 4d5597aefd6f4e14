package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/mounts"
)

// subPath is what a container mounts for the subPath rel of the volume at volumePath: the
// file or directory resolveSubPath checked, opened beneath the volume without following a
// symlink and bind-mounted at target, a mount point of the pod's own. A path into the volume
// would be resolved again by the runtime when it mounts it, and a container that shares the
// volume could by then have swapped a checked directory for a symlink to / (CVE-2017-1002101,
// CVE-2021-25741); the mount point is out of every container's reach, and what is mounted on
// it was fixed when it was opened.
//
// Without the right to mount (Config.CanMount false: an agent that is not root) it returns
// the checked path itself: the swap is still refused when it is there to see, but the window
// until the runtime opens the path stays open. Such an agent's containers run with no more
// than its own user's rights, which are all the swap could reach.
func (m *Manager) subPath(target, volumePath, rel string) (string, error) {
	root, resolved, err := resolveSubPath(volumePath, rel)
	if err != nil {
		return "", err
	}
	below, err := filepath.Rel(root, resolved)
	if err != nil {
		return "", err
	}
	fd, err := openBeneath(root, below)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	if !m.canMount {
		return resolved, nil
	}
	if err := bindSubPath(fd, target); err != nil {
		return "", err
	}
	return target, nil
}

// bindSubPath bind-mounts the file or directory open as fd at target. A mount already there of
// that same file is kept: a container started again (a restart, an agent restart) mounts what
// it mounted before, once. Anything else mounted there (the subPath is another file by now) is
// detached first, so that mounts never stack.
func bindSubPath(fd int, target string) error {
	var src unix.Stat_t
	if err := unix.Fstat(fd, &src); err != nil {
		return err
	}
	fsType, err := mountedAt(target)
	if err != nil {
		return err
	}
	if fsType != "" {
		var cur unix.Stat_t
		if err := unix.Stat(target, &cur); err == nil && cur.Dev == src.Dev && cur.Ino == src.Ino {
			return nil
		}
		if err := mounts.UnmountUnder(target); err != nil {
			return fmt.Errorf("detaching the earlier subPath mount: %w", err)
		}
		if fsType, err := mountedAt(target); err != nil {
			return err
		} else if fsType != "" {
			return fmt.Errorf("%s is still mounted after it was detached", target)
		}
	}
	if err := makeMountPoint(target, src.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return fmt.Errorf("making the subPath's mount point: %w", err)
	}
	// The descriptor's magic link: the kernel mounts the file it holds, not a path.
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting the subPath at %s: %w", target, err)
	}
	return nil
}

// makeMountPoint makes target a directory (isDir) or an empty file, which takes a mount of
// anything that is not a directory, as in the kubelet. What an earlier mount of the other type
// left there, unmounted by now, is removed first (a directory only when empty).
func makeMountPoint(target string, isDir bool) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	info, err := os.Lstat(target)
	switch {
	case err == nil && info.IsDir() == isDir && (isDir || info.Mode().IsRegular()):
		return nil
	case err == nil:
		if err := os.Remove(target); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if isDir {
		return os.Mkdir(target, 0o750)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

// teardownSubPaths detaches the pod's subPath mounts (lazily: a container still holding one
// keeps its own copy) and then removes volume-subpaths, only once nothing at all is mounted
// below it: a mount anywhere else than at a subPath's mount point is not one of them, and it
// stays, with the directory, and an error that names it (mounts.RemoveAll).
func (m *Manager) teardownSubPaths(ctx context.Context, uid types.UID) error {
	dir := m.subPathsDir(uid)
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	mps, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	for _, mp := range mps {
		if !isSubPathTarget(dir, mp.Path) {
			continue
		}
		klog.FromContext(ctx).V(3).Info("Unmounting a subPath", "podUID", uid, "path", mp.Path)
		if err := unix.Unmount(mp.Path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmounting %s: %w", mp.Path, err)
		}
	}
	return mounts.RemoveAll(dir)
}

// isSubPathTarget reports whether p is a mount point subPathTarget names below dir:
// <volume>/<container>/<index>.
func isSubPathTarget(dir, p string) bool {
	rel, ok := strings.CutPrefix(p, dir+"/")
	return ok && strings.Count(rel, "/") == 2
}

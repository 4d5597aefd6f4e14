package volume

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// Teardown unmounts and removes the pod's subPath mounts (<PodsDir>/<uid>/volume-subpaths),
// then <PodsDir>/<uid>/volumes and everything in it. It never follows a symlink (a link a
// container planted in an emptyDir is removed, not its target), never descends into another
// file system (a mount it could not undo stops it, with an error, before anything under the
// mount is touched), and never touches hostPath volumes, which are not there. Tearing down a
// pod with no volumes directory is not an error. The pod's cached service account tokens are
// forgotten.
func (m *Manager) Teardown(ctx context.Context, uid types.UID) error {
	if err := checkUID(uid); err != nil {
		return err
	}
	unlock := m.locks.lock(uid)
	defer unlock()
	// The pod is gone: its tokens will not be asked for again (the kubelet's
	// DeleteServiceAccountToken). A pod set up again after a failed Teardown gets new ones.
	m.tokens.forget(uid)

	// The subPath mounts first: they show what is in the volumes.
	if err := m.teardownSubPaths(ctx, uid); err != nil {
		return fmt.Errorf("volume: tearing down pod %s: subPath mounts: %w", uid, err)
	}
	root := m.volumesDir(uid)
	rootInfo, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("volume: tearing down pod %s: %w", uid, err)
	}
	if !rootInfo.IsDir() {
		return fmt.Errorf("volume: tearing down pod %s: %s is not a directory", uid, root)
	}

	mounts, err := mountsUnder(root)
	if err != nil {
		return fmt.Errorf("volume: tearing down pod %s: %w", uid, err)
	}
	for _, mp := range mounts {
		klog.FromContext(ctx).V(3).Info("Unmounting a volume", "podUID", uid, "path", mp.Path, "fsType", mp.FSType)
		if err := syscall.Unmount(mp.Path, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("volume: tearing down pod %s: unmounting %s: %w", uid, mp.Path, err)
		}
	}

	dev, ok := deviceOf(rootInfo)
	if !ok {
		return fmt.Errorf("volume: tearing down pod %s: cannot tell the file system of %s", uid, root)
	}
	if err := removeTree(root, dev); err != nil {
		return fmt.Errorf("volume: tearing down pod %s: %w", uid, err)
	}
	return nil
}

// removeTree removes p and, when it is a directory, its content, staying on device dev:
// symlinks are removed as links; a directory on another device is a mount still in place,
// and removing below it would delete what the mount holds, so it is an error.
func removeTree(p string, dev uint64) error {
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		if d, ok := deviceOf(info); !ok || d != dev {
			return fmt.Errorf("%s is a mount point that is still mounted; not removing what it holds", p)
		}
		// A container may leave a directory it cannot write (0500); the agent, not root
		// everywhere, must still empty it. p is a directory, not a link: chmod stays here.
		if info.Mode().Perm()&0o700 != 0o700 {
			if err := os.Chmod(p, info.Mode().Perm()|0o700); err != nil {
				return err
			}
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		var errs []error
		for _, e := range entries {
			if err := removeTree(filepath.Join(p, e.Name()), dev); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func deviceOf(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true //nolint:unconvert // Dev's type differs between architectures
}

package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// setupMounts makes mounts visible to the supervisor and everything it starts. The supervisor
// runs in a mount namespace of its own (the runtime starts it with CLONE_NEWNS), so none of this
// reaches the host: first every mount becomes private (a new namespace's mounts are still
// peers of the host's and would propagate back), then each volume is bind-mounted over its
// container path, read-only by a second, remounting bind.
//
// A container path must exist on the host: creating it would change the host for a pod, and a
// pod — written by anyone who may create pods — could then make, say, /etc/nologin appear. The
// one exception is the directories under /run/secrets (and /var/run/secrets, its usual
// symlink), where every API pod's service account token is mounted
// (/var/run/secrets/kubernetes.io/serviceaccount): those are created, empty, and left for the
// next container, like the directories hostPath DirectoryOrCreate makes.
func setupMounts(mounts []records.Mount) error {
	if len(mounts) == 0 {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private in the container's mount namespace: %w", err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(m.ContainerPath); errors.Is(err, fs.ErrNotExist) {
			if err := createSecretsMountPoint(m); err != nil {
				return err
			}
		} else if err != nil {
			return fmt.Errorf("mountPath %s: %w", m.ContainerPath, err)
		}
		if _, err := os.Stat(m.HostPath); err != nil {
			return fmt.Errorf("volume for mountPath %s: %w", m.ContainerPath, err)
		}
		if err := unix.Mount(m.HostPath, m.ContainerPath, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s on %s: %w", m.HostPath, m.ContainerPath, err)
		}
		if !m.ReadOnly {
			continue
		}
		// A remount must repeat the flags the kernel locks on the mount (nosuid, nodev, ...),
		// or it fails in a user namespace.
		var st unix.Statfs_t
		if err := unix.Statfs(m.ContainerPath, &st); err != nil {
			return fmt.Errorf("read-only mount %s: %w", m.ContainerPath, err)
		}
		flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
		for stFlag, msFlag := range map[int64]uintptr{
			unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
			unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
		} {
			if int64(st.Flags)&stFlag != 0 {
				flags |= msFlag
			}
		}
		if err := unix.Mount("", m.ContainerPath, "", flags, ""); err != nil {
			return fmt.Errorf("make mount %s read-only: %w", m.ContainerPath, err)
		}
	}
	return nil
}

// secretsDir is where missing mount points are created: the service account token's parent.
const secretsDir = "/run/secrets"

// createSecretsMountPoint creates m's missing container path if it is a directory mount under
// secretsDir (after resolving the symlinks of the part that exists), or says why it may not.
func createSecretsMountPoint(m records.Mount) error {
	refused := fmt.Errorf("mountPath %s does not exist on this host: the process provider mounts volumes over existing host paths (it creates missing ones only under %s)", m.ContainerPath, secretsDir)
	if st, err := os.Stat(m.HostPath); err != nil || !st.IsDir() {
		return refused
	}
	existing, rest := filepath.Clean(m.ContainerPath), ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return refused
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return refused
	}
	target := filepath.Join(resolved, rest)
	if target != secretsDir && !strings.HasPrefix(target, secretsDir+"/") {
		return refused
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("create mountPath %s: %w", m.ContainerPath, err)
	}
	return nil
}

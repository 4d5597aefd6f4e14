package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// setupMounts makes mounts visible to the supervisor and everything it starts, and, for a
// restricted container, hardens that view (hardenView). The supervisor runs in a mount
// namespace of its own (the runtime starts it with CLONE_NEWNS), so none of this reaches the
// host: first every mount becomes private (a new namespace's mounts are still peers of the
// host's and would propagate back), then each volume is bind-mounted over its container path,
// read-only by a second, remounting bind.
//
// A container path must exist on the host: creating it would change the host for a pod, and a
// pod — written by anyone who may create pods — could then make, say, /etc/nologin appear. The
// exceptions are the directories under /run/secrets (and /var/run/secrets, its usual
// symlink), where every API pod's service account token is mounted
// (/var/run/secrets/kubernetes.io/serviceaccount): those are created, empty, and left for the
// next container, like the directories hostPath DirectoryOrCreate makes; and, for a restricted
// container, paths under its private /tmp and /var/tmp, which are its own.
func setupMounts(mounts []records.Mount, sb *records.Sandbox) error {
	if len(mounts) == 0 && !sb.Restricted {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private in the container's mount namespace: %w", err)
	}
	// The volumes are opened before anything is mounted over the host's paths: a private /tmp
	// would hide a volume whose directory is under the host's /tmp. Opening by name is safe: a
	// subPath comes as the lifecycle's bind mount of what it checked, at a path of the pod's
	// own that no container can reach (lifecycle/volume), never as a path into the volume.
	sources := make([]int, len(mounts))
	for i, m := range mounts {
		fd, err := unix.Open(m.HostPath, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll(sources[:i])
			return fmt.Errorf("volume for mountPath %s: %w", m.ContainerPath, &os.PathError{Op: "open", Path: m.HostPath, Err: err})
		}
		sources[i] = fd
	}
	defer closeAll(sources)
	var private []string
	if sb.Restricted {
		var err error
		if private, err = privateTmp(); err != nil {
			return err
		}
		// Before the volumes: a volume the operator allowed at a masked path (a hostPath
		// under --process-allowed-host-paths) goes over the mask.
		for _, p := range sb.Masked {
			if err := mask(p); err != nil {
				return err
			}
		}
	}
	for i, m := range mounts {
		if err := mountVolume(m, sources[i], private); err != nil {
			return err
		}
	}
	if sb.Restricted {
		return hardenView()
	}
	return nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// mountVolume bind-mounts one volume, opened as source, over its container path.
func mountVolume(m records.Mount, source int, private []string) error {
	var hostInfo unix.Stat_t
	if err := unix.Fstat(source, &hostInfo); err != nil {
		return fmt.Errorf("volume for mountPath %s: %w", m.ContainerPath, err)
	}
	target := m.ContainerPath
	if _, err := os.Stat(m.ContainerPath); errors.Is(err, fs.ErrNotExist) {
		var release func()
		isDir := hostInfo.Mode&unix.S_IFMT == unix.S_IFDIR
		if target, release, err = createMountPoint(m, isDir, private); err != nil {
			return err
		}
		defer release()
	} else if err != nil {
		return fmt.Errorf("mountPath %s: %w", m.ContainerPath, err)
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(source), target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mount %s on %s: %w", m.HostPath, m.ContainerPath, err)
	}
	if !m.ReadOnly {
		return nil
	}
	if err := remount(m.ContainerPath, unix.MS_RDONLY); err != nil {
		return fmt.Errorf("make mount %s read-only: %w", m.ContainerPath, err)
	}
	return nil
}

// privateTmpDirs are the host's world-writable directories, which a restricted container gets
// empty ones of its own over, as a container gets them from its image: shared, they are where
// one pod's files are read, or planted, by another.
var privateTmpDirs = []string{"/tmp", "/var/tmp"}

// privateTmp mounts an empty tmpfs over each of privateTmpDirs the host has, and returns their
// resolved paths.
func privateTmp() ([]string, error) {
	var out []string
	for _, dir := range privateTmpDirs {
		resolved, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("private %s: %w", dir, err)
		}
		if slices.Contains(out, resolved) {
			continue
		}
		if err := unix.Mount("tmpfs", resolved, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return nil, fmt.Errorf("private %s: %w", dir, err)
		}
		out = append(out, resolved)
	}
	return out, nil
}

// secretsDir is where missing mount points are created on the host: the service account
// token's parent.
const secretsDir = "/run/secrets"

// createMountPoint creates m's missing container path where that is allowed — a directory mount
// under secretsDir, or anything under one of private (the container's own /tmp) — or says why it
// may not. It returns the name to mount on, /proc/self/fd/N of the directory or file it made,
// and what to call once mounted: the path was made beneath a directory descriptor, one
// component at a time without following a symbolic link, and the mount goes on what was made,
// so that a symbolic link swapped in meanwhile by anyone who can write there cannot send the
// mount, or the directories, elsewhere.
func createMountPoint(m records.Mount, isDir bool, private []string) (string, func(), error) {
	refused := fmt.Errorf("mountPath %s does not exist on this host: the process provider mounts volumes over existing host paths (it creates missing ones only under %s)", m.ContainerPath, secretsDir)
	// The part that exists, with its symbolic links resolved: /var/run is /run on most hosts.
	existing, rest := filepath.Clean(m.ContainerPath), ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", nil, refused
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", nil, refused
	}
	target := filepath.Join(resolved, rest)
	base := ""
	for _, dir := range private {
		if strings.HasPrefix(target, dir+"/") {
			base = dir
		}
	}
	if base == "" {
		if !isDir || (target != secretsDir && !strings.HasPrefix(target, secretsDir+"/")) {
			return "", nil, refused
		}
		base = filepath.Dir(secretsDir)
	}
	fd, err := makeBeneath(base, strings.TrimPrefix(target, base+"/"), isDir)
	if err != nil {
		return "", nil, fmt.Errorf("create mountPath %s: %w", m.ContainerPath, err)
	}
	return "/proc/self/fd/" + strconv.Itoa(fd), func() { unix.Close(fd) }, nil
}

// makeBeneath creates rel below base, directories with mode 0755 (and a last empty file when
// !isDir), never following a symbolic link, and returns an O_PATH descriptor of the last one.
func makeBeneath(base, rel string, isDir bool) (int, error) {
	fd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: base, Err: err}
	}
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		last := i == len(parts)-1
		flags := unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last && !isDir {
			if nfd, err := unix.Openat(fd, name, unix.O_CREAT|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644); err == nil {
				unix.Close(nfd)
			} else if !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, err
			}
		} else {
			flags |= unix.O_DIRECTORY
			if err := unix.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, err
			}
		}
		next, err := unix.Openat(fd, name, flags, 0)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("%s: %w", name, err)
		}
		fd = next
	}
	return fd, nil
}

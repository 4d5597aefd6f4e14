package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/records"
)

// A restricted container runs in a view of the host, not on it: the supervisor's own mount
// namespace, in which the runtime's CLONE_NEWNS puts it, is hardened before anything of the
// pod runs (setupMounts, hardenView), and the launcher's thread — from which the workload and every exec
// are forked — joins the pod's namespaces and sets no_new_privs (enterSandbox). A container
// runtime gets the same from a root filesystem of the image's and namespaces of its own; here
// the filesystem is the host's, so what it holds that a pod must not use is taken away:
//
//   - setuid and setgid bits and file capabilities, by nosuid on every mount and no_new_privs
//     (a volume mounted over /etc/pam.d made the host's su a way to root);
//   - device nodes, by nodev on every mount and a /dev of the container's own that has only
//     the standard devices (the host's /dev has the raw disks);
//   - the node agent's state and credentials (Sandbox.Masked), behind empty read-only mounts;
//   - other pods' processes, by a PID namespace with a /proc of its own (the init helper mounts
//     it, since only a process inside a PID namespace can), and IPC and UTS namespaces.

// enterSandbox runs on the launcher's thread before it starts anything: it sets no_new_privs
// and joins the pod holder's namespaces, so that every process forked from the thread — the
// workload, the init helper, each exec — starts in them. Both are attributes of the thread, not
// the process: the supervisor's other threads keep the host's namespaces (it reaches its
// records and the runtime's socket there), and Go creates no thread from a locked one.
func enterSandbox(sb *records.Sandbox) error {
	if sb.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs: %w", err)
		}
	}
	h := sb.Holder
	if h == nil {
		return nil
	}
	var kinds []nsKind
	if sb.JoinIPC {
		kinds = append(kinds, nsKind{"ipc", unix.CLONE_NEWIPC})
	}
	if sb.JoinUTS {
		kinds = append(kinds, nsKind{"uts", unix.CLONE_NEWUTS})
	}
	if sb.JoinNet {
		kinds = append(kinds, nsKind{"net", unix.CLONE_NEWNET})
	}
	if sb.JoinPID {
		kinds = append(kinds, nsKind{"pid", unix.CLONE_NEWPID})
	}
	return joinNamespaces(h.Pid, h.StartTime, kinds)
}

type nsKind struct {
	name string
	flag int
}

// joinNamespaces joins the calling thread to the namespaces of process pid, which must still be
// the process that started at startTime: each namespace is opened first and the process
// checked after, so that a pid reused in between is noticed rather than joined.
func joinNamespaces(pid int, startTime uint64, kinds []nsKind) error {
	fds := make([]int, 0, len(kinds))
	defer func() { closeAll(fds) }()
	for _, k := range kinds {
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, k.name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("the pod's namespace holder (pid %d) is gone: %w", pid, err)
		}
		fds = append(fds, fd)
	}
	if err := procfs.SameProcess(pid, startTime); err != nil {
		return fmt.Errorf("the pod's namespace holder (pid %d) is gone: %w", pid, err)
	}
	for i, k := range kinds {
		if err := unix.Setns(fds[i], k.flag); err != nil {
			return fmt.Errorf("join the pod's %s namespace: %w", k.name, err)
		}
	}
	return nil
}

// joinOwnPIDNamespace joins the calling thread to the PID namespace the workload made for the
// container (it is its PID 1), for the execs that follow.
func joinOwnPIDNamespace(pid int, startTime uint64) error {
	return joinNamespaces(pid, startTime, []nsKind{{"pid", unix.CLONE_NEWPID}})
}

// ownPIDNamespace says whether the workload gets a PID namespace of its own (the init helper is
// cloned into a new one and executes the workload as its PID 1), as a container of a pod
// without shareProcessNamespace does.
func ownPIDNamespace(sb *records.Sandbox) bool {
	return sb.Restricted && !sb.JoinPID && !sb.HostPID
}

// mountsProc says whether the init helper mounts a /proc for the PID namespace it runs in.
func mountsProc(sb *records.Sandbox) bool {
	return sb.Restricted && !sb.HostPID
}

// hardenView finishes a restricted container's view once its volumes are mounted (they are
// hardened with the rest): a /dev of its own, then nosuid and nodev on every mount but the new
// /dev's. setupMounts has made its /tmp its own and masked Sandbox.Masked.
func hardenView() error {
	if err := makeDev(); err != nil {
		return err
	}
	return noSuidNoDev()
}

// mask hides path behind an empty read-only directory (or, for a file, the null device, which
// nodev then makes unopenable). A path the view does not have — not on this host, or under a
// volume the pod mounted over its parent — has nothing to hide.
func mask(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=1,mode=0555")
	} else {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("mask %s: %w", path, err)
	}
	return nil
}

// devNodes are the devices of a container's /dev, as OCI runtimes give every container.
var devNodes = []struct {
	name         string
	major, minor uint32
}{
	{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9},
	{"tty", 5, 0}, {"ptmx", 5, 2},
}

// devShmSize bounds a container's /dev/shm, as Docker's default does: it is memory.
const devShmSize = "64m"

// makeDev mounts a /dev of the container's own over the host's: the standard devices, the
// host's /dev/pts (a TTY's terminal is one of its ptys: the supervisor opens it through the new
// /dev/ptmx, which allocates in the pts beside it), an empty /dev/shm and the /proc links.
func makeDev() error {
	pts, err := unix.Open("/dev/pts", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("/dev/pts: %w", err)
	}
	defer unix.Close(pts)
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	old := unix.Umask(0)
	defer unix.Umask(old)
	for _, d := range devNodes {
		if err := unix.Mknod(filepath.Join("/dev", d.name), unix.S_IFCHR|0o666, int(unix.Mkdev(d.major, d.minor))); err != nil {
			return fmt.Errorf("/dev/%s: %w", d.name, err)
		}
	}
	for _, dir := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join("/dev", dir), 0o755); err != nil {
			return fmt.Errorf("/dev/%s: %w", dir, err)
		}
	}
	if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", pts), "/dev/pts", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	if err := unix.Mount("shm", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=1777,size="+devShmSize); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, filepath.Join("/dev", name)); err != nil {
			return fmt.Errorf("/dev/%s: %w", name, err)
		}
	}
	return nil
}

// devicesAt are the mounts of makeDev whose device nodes a container uses.
var devicesAt = []string{"/dev", "/dev/pts"}

// noSuidNoDev makes every mount of the view nosuid, and nodev but devicesAt: one mount_setattr
// over the whole tree, else (Linux before 5.12) a remount of each mount point.
func noSuidNoDev() error {
	err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV})
	if err == nil {
		for _, dir := range devicesAt {
			if err := unix.MountSetattr(unix.AT_FDCWD, dir, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_NODEV}); err != nil {
				return fmt.Errorf("keep the devices of %s: %w", dir, err)
			}
		}
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("make every mount nosuid and nodev: %w", err)
	}
	return remountEach()
}

// remountEach is noSuidNoDev by a remount of each mount point, for kernels without
// mount_setattr.
func remountEach() error {
	points, err := mounts.Under("/")
	if err != nil {
		return err
	}
	for _, p := range points {
		add := uintptr(unix.MS_NOSUID)
		if !slices.Contains(devicesAt, p) {
			add |= unix.MS_NODEV
		}
		if err := remount(p, add); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EACCES) {
			return err
		}
	}
	return nil
}

// remount adds flags to the mount at path, repeating the flags it has: a bind remount replaces
// them all, and fails where the kernel locked one of them.
func remount(path string, add uintptr) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("remount %s: %w", path, err)
	}
	flags := uintptr(unix.MS_REMOUNT|unix.MS_BIND) | add
	for stFlag, msFlag := range map[int64]uintptr{
		unix.ST_RDONLY: unix.MS_RDONLY, unix.ST_NOSUID: unix.MS_NOSUID, unix.ST_NODEV: unix.MS_NODEV, unix.ST_NOEXEC: unix.MS_NOEXEC,
		unix.ST_NOATIME: unix.MS_NOATIME, unix.ST_NODIRATIME: unix.MS_NODIRATIME, unix.ST_RELATIME: unix.MS_RELATIME,
	} {
		if int64(st.Flags)&stFlag != 0 {
			flags |= msFlag
		}
	}
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return fmt.Errorf("remount %s: %w", path, err)
	}
	return nil
}

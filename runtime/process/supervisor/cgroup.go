package supervisor

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// startInCgroup starts cmd in the container's cgroup, from the launcher's thread: cloned
// straight into it (CLONE_INTO_CGROUP: cgroup v2, Linux 5.7 and later) — no moment outside
// it, and no init helper to execute first unless it has a /proc to mount — else through the
// init helper, which joins the cgroup before it executes the command. A container without a
// cgroup starts as it is (or through the helper for its /proc).
func (s *supervisor) startInCgroup(cmd *exec.Cmd) error {
	if dir := cgroupV2Dir(s.rec.Cgroups); dir != "" {
		if fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			fresh := freshCmd(cmd)
			attr := *cmd.SysProcAttr
			fresh.SysProcAttr = &attr
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
			initErrors, err := s.throughInit(cmd, false)
			if err == nil {
				err = s.startCommand(cmd, initErrors)
			}
			unix.Close(fd)
			if !cloneIntoCgroupRefused(err) {
				return err
			}
			*cmd = fresh // a Cmd starts once; nothing was started
		}
	}
	initErrors, err := s.throughInit(cmd, true)
	if err == nil {
		err = s.startCommand(cmd, initErrors)
	}
	return err
}

// cgroupV2Dir is the directory of the container's cgroup when it is a cgroup v2 one (recorded
// under ""); "" otherwise.
func cgroupV2Dir(cgroups map[string]string) string {
	if len(cgroups) != 1 {
		return ""
	}
	return cgroups[""]
}

// cloneIntoCgroupRefused reports whether a start cloned into a cgroup failed for the clone
// itself, and so started nothing: no clone3 (before Linux 5.3: ENOSYS), no CLONE_INTO_CGROUP
// (before 5.7: E2BIG or EINVAL), or a cgroup that takes no process (EBUSY, EOPNOTSUPP, EBADF).
// The same errors from the command's exec (an argument list too long, say) are reported all
// the same: the init helper, tried next, meets them too.
func cloneIntoCgroupRefused(err error) bool {
	for _, errno := range []syscall.Errno{unix.ENOSYS, unix.E2BIG, unix.EINVAL, unix.EBUSY, unix.EOPNOTSUPP, unix.EBADF} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
)

// The init helper puts a command in its container's cgroup before the command runs: the
// supervisor re-executes its own binary as protocol.InitArg0, which joins the cgroup (writing
// its pid to each directory's cgroup.procs, as the cgroup library's WriteCgroupProc does — the
// supervisor links only the standard library and x/sys), drops to the container's user and
// executes the command in its own place, as runc's init does. Joining from the supervisor after
// the start would leave a moment in which the command could fork outside the cgroup; moving the
// supervisor itself in would charge its memory to the container and kill it with the container.
// A failure before the exec is written to fd 3, a close-on-exec pipe whose EOF means the
// command runs. On cgroup v1 the workload itself is started without it (launcher.startInCgroup);
// on v2 every command is cloned straight into the cgroup (startInCgroup), and the helper runs
// only to mount a /proc, or where the kernel refuses the clone.

// initSpec is the helper's argument.
type initSpec struct {
	Cgroups []string      `json:"cgroups"`
	Path    string        `json:"path"`
	Argv    []string      `json:"argv"`
	Cred    *initIdentity `json:"cred,omitempty"`
	// Proc mounts a /proc for the PID namespace the helper runs in, in the mount namespace it
	// was cloned into: only a process of that PID namespace can.
	Proc bool `json:"proc,omitempty"`
}

type initIdentity struct {
	UID, GID uint32
	Groups   []uint32
}

// initErrorFd is the helper's error pipe.
const initErrorFd = 3

// RunInitIfRequested runs this process as the init helper and never returns when it was
// started as one (argv[0] is protocol.InitArg0); otherwise it returns at once. Call it first
// thing in main, before Requested.
func RunInitIfRequested() {
	if len(os.Args) != 2 || os.Args[0] != protocol.InitArg0 {
		return
	}
	unix.CloseOnExec(initErrorFd)
	errs := os.NewFile(initErrorFd, "init-error")
	err := runInit(os.Args[1])
	_, _ = io.WriteString(errs, err.Error())
	os.Exit(127)
}

// runInit joins the cgroup, drops to the user and executes the command; it returns only why it
// could not.
func runInit(arg string) error {
	var spec initSpec
	if err := json.Unmarshal([]byte(arg), &spec); err != nil {
		return fmt.Errorf("init helper: %w", err)
	}
	if spec.Proc {
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc: %w", err)
		}
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, dir := range spec.Cgroups {
		if err := writeRetryingEINTR(filepath.Join(dir, "cgroup.procs"), pid); err != nil {
			return fmt.Errorf("join cgroup %s: %w", dir, err)
		}
	}
	if c := spec.Cred; c != nil {
		groups := make([]int, len(c.Groups))
		for i, g := range c.Groups {
			groups[i] = int(g)
		}
		if err := syscall.Setgroups(groups); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
		if err := syscall.Setgid(int(c.GID)); err != nil {
			return fmt.Errorf("setgid %d: %w", c.GID, err)
		}
		if err := syscall.Setuid(int(c.UID)); err != nil {
			return fmt.Errorf("setuid %d: %w", c.UID, err)
		}
	}
	err := syscall.Exec(spec.Path, spec.Argv, os.Environ())
	return &os.PathError{Op: "fork/exec", Path: spec.Path, Err: err}
}

func writeRetryingEINTR(path string, data []byte) error {
	for {
		err := os.WriteFile(path, data, 0)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// throughInit makes cmd start through the init helper when it has the container's cgroup to
// join (join: cmd is not cloned into it) or a /proc of its own to mount: the helper is this
// binary, the command and its user its argument; it returns the read end of the helper's error
// pipe (nil when cmd is left as it is), for startCommand.
func (s *supervisor) throughInit(cmd *exec.Cmd, join bool) (*os.File, error) {
	proc := mountsProc(&s.rec.Sandbox)
	join = join && len(s.rec.Cgroups) > 0
	if !join && !proc {
		return nil, nil
	}
	spec := initSpec{Path: cmd.Path, Argv: cmd.Args, Proc: proc}
	if proc {
		// Its /proc is the command's alone; the supervisor keeps the host's.
		cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWNS
	}
	seen := map[string]bool{}
	for _, dir := range s.rec.Cgroups {
		if join && !seen[dir] { // co-mounted v1 controllers share a directory
			seen[dir] = true
			spec.Cgroups = append(spec.Cgroups, dir)
		}
	}
	sort.Strings(spec.Cgroups)
	if c := cmd.SysProcAttr.Credential; c != nil {
		spec.Cred = &initIdentity{UID: c.Uid, GID: c.Gid, Groups: c.Groups}
		cmd.SysProcAttr.Credential = nil // the helper drops them, after it joined the cgroup
	}
	arg, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Path, cmd.Args = "/proc/self/exe", []string{protocol.InitArg0, string(arg)}
	cmd.ExtraFiles = []*os.File{w} // fd 3: initErrorFd
	return r, nil
}

// startCommand starts cmd from the launcher's thread; through the init helper (initErrors is its
// error pipe), it returns once the command itself runs, or with why the helper could not run it.
func (s *supervisor) startCommand(cmd *exec.Cmd, initErrors *os.File) error {
	err := s.launch.start(cmd)
	if initErrors == nil {
		return err
	}
	defer initErrors.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the helper's copy only: EOF comes with its exec
	}
	if err != nil {
		return err
	}
	msg, _ := io.ReadAll(initErrors)
	if len(msg) > 0 {
		_ = cmd.Wait()
		return errors.New(string(msg))
	}
	return nil
}

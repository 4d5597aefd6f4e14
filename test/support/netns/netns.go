package netns

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// NodeIP is the address Enter gives lo by default: in no network of the machine's, and only
// inside the namespace.
var NodeIP = net.IPv4(10, 213, 0, 1)

// parentEnv marks the re-executed child, with its parent's pid: Enter compares their
// namespaces.
const parentEnv = "VK_STATIC_NETNS_PARENT"

// InChild reports whether this process was started by Command (and should call Enter).
func InChild() bool { return os.Getenv(parentEnv) != "" }

// Command is this executable again, with args and env added to this process's environment,
// to be run in new network and mount namespaces. It dies with this process (Pdeathsig): the
// processes it starts should have a Pdeathsig of their own, so that the namespaces go when
// the parent does. Its output is this process's.
func Command(args []string, env ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(append(os.Environ(), env...), parentEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd, nil
}

// Enter prepares the namespaces of a child started by Command: it fails unless this process
// is in a network and a mount namespace other than its parent's (never add an address to the
// machine's lo, nor change its mounts), makes every mount private, brings lo up and adds
// ip/32 to it.
func Enter(ip net.IP) error {
	parent, err := strconv.Atoi(os.Getenv(parentEnv))
	if err != nil {
		return fmt.Errorf("%s=%q: %w", parentEnv, os.Getenv(parentEnv), err)
	}
	for _, kind := range []string{"net", "mnt"} {
		if same, err := sameNamespace(parent, kind); err != nil || same {
			return fmt.Errorf("not in a %s namespace of its own (same as pid %d: %v, %v)", kind, parent, same, err)
		}
	}
	if err := makeMountsPrivate(); err != nil {
		return fmt.Errorf("set up the mount namespace: %w", err)
	}
	if err := setUpLoopback(ip); err != nil {
		return fmt.Errorf("set up the network namespace: %w", err)
	}
	return nil
}

// ExitCode is the exit code of a child that ran (cmd.Run's err): 0, its own, or 1 when a
// signal ended it. It returns an error when the child could not be started in new
// namespaces, saying so when that is for want of privileges.
func ExitCode(err error) (int, error) {
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exitErr):
		if code := exitErr.ExitCode(); code > 0 {
			return code, nil
		}
		return 1, nil // killed by a signal
	case errors.Is(err, syscall.EPERM):
		return 0, fmt.Errorf("cannot create network and mount namespaces (clone CLONE_NEWNET|CLONE_NEWNS: %w): root or CAP_SYS_ADMIN is needed", err)
	default:
		return 0, fmt.Errorf("run in new network and mount namespaces: %w", err)
	}
}

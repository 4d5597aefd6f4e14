package e2enetns

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/vk-static/vk-static/internal/agentproc"
	"github.com/vk-static/vk-static/internal/testenv"
)

// NodeIP is the agents' address, on lo in the test's network namespace only.
var NodeIP = net.IPv4(10, 213, 0, 1)

// Set by the parent for the child it re-executes in the new network namespace.
const (
	childEnv   = "VK_STATIC_E2ENETNS_CHILD"   // the parent's pid
	binDirEnv  = "VK_STATIC_E2ENETNS_BIN"     // vk-static and vk-static-supervisor
	workDirEnv = "VK_STATIC_E2ENETNS_WORKDIR" // the agents' directories go under it
)

var (
	env *testenv.Env
	// agentBinary is vk-static built with -race, with vk-static-supervisor beside it.
	agentBinary string
	// workDir holds every agent's directory, so that the parent can find their containers.
	workDir string
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild(m))
	}
	os.Exit(runParent())
}

// runParent builds the agent, runs this binary again with the same arguments in a new network
// namespace, and returns its exit code once it and every container process it left are gone.
func runParent() int {
	dir, err := os.MkdirTemp("", "vk-static-e2enetns-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin, work := filepath.Join(dir, "bin"), filepath.Join(dir, "work")
	for _, d := range []string{bin, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := buildAgent(bin); err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		return 1
	}

	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	child := exec.Command(self, os.Args[1:]...)
	child.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(os.Getpid()), binDirEnv+"="+bin, workDirEnv+"="+work)
	child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
	// A mount namespace too: the volumes the agents mount (tmpfs for projected volumes, as a
	// kubelet does) stay there, and go with it, even when an agent stops with its pods.
	// The child (and, through their Pdeathsig, the control plane and agents) dies with this
	// process; the namespaces go with the last process in them.
	child.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		Pdeathsig:  syscall.SIGKILL,
	}
	code := 0
	if err := child.Run(); err != nil {
		var exitErr *exec.ExitError
		switch {
		case errors.As(err, &exitErr):
			code = exitErr.ExitCode()
		case errors.Is(err, syscall.EPERM):
			fmt.Fprintf(os.Stderr, "e2enetns: cannot create network and mount namespaces (clone CLONE_NEWNET|CLONE_NEWNS: %v): "+
				"these tests need root or CAP_SYS_ADMIN\n", err)
			return 1
		default:
			fmt.Fprintln(os.Stderr, "e2enetns: run the tests in a new network namespace:", err)
			return 1
		}
		if code == 0 { // killed by a signal
			code = 1
		}
	}
	// The child's tests kill their containers; this is the last resort for a child that died
	// before its clean-up.
	killed, err := agentproc.KillContainers(work)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns:", err)
		code = max(code, 1)
	}
	if len(killed) > 0 {
		fmt.Fprintf(os.Stderr, "e2enetns: killed %d container processes left behind: %v\n", len(killed), killed)
		code = max(code, 1)
	}
	return code
}

// buildAgent builds vk-static with the race detector, and vk-static-supervisor as make build
// does, into dir.
func buildAgent(dir string) error {
	if _, err := agentproc.BuildAgent(dir); err != nil {
		return err
	}
	_, err := agentproc.BuildSupervisor(dir)
	return err
}

// runChild sets up the network namespace it runs in, then runs the tests against a control
// plane started in it.
func runChild(m *testing.M) int {
	parent, err := strconv.Atoi(os.Getenv(childEnv))
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2enetns: %s=%q: %v\n", childEnv, os.Getenv(childEnv), err)
		return 1
	}
	// Never add an address to the machine's lo, nor change its mounts: only in namespaces of
	// our own.
	for _, kind := range []string{"net", "mnt"} {
		if same, err := sameNamespace(parent, kind); err != nil || same {
			fmt.Fprintf(os.Stderr, "e2enetns: not in a %s namespace of its own (same as pid %d: %v, %v)\n", kind, parent, same, err)
			return 1
		}
	}
	if err := makeMountsPrivate(); err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns: set up the mount namespace:", err)
		return 1
	}
	if err := setUpLoopback(NodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "e2enetns: set up the network namespace:", err)
		return 1
	}
	agentBinary = filepath.Join(os.Getenv(binDirEnv), "vk-static")
	workDir = os.Getenv(workDirEnv)
	return testenv.Main(m, &env)
}

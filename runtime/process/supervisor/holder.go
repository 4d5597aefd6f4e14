package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/runtime/process/internal/procfs"
	"github.com/vk-static/vk-static/runtime/process/internal/protocol"
)

// A restricted pod's namespace holder is what a CRI runtime's pause container is: the PID 1 of
// the pod's PID namespace, in the pod's IPC and UTS namespaces (its hostname set), which the
// containers of the pod join (enterSandbox). It reaps what is orphaned in the namespace, and
// holds the namespaces while no container runs. The runtime starts it at RunSandbox and kills
// it at StopSandbox, which kills every process left in the namespace.
//
// Starting takes two processes, so that the holder is nobody's child that must reap it: the
// runtime runs the holder binary with HolderStart, which starts the holder itself (HolderRun,
// in new namespaces, a session of its own), waits until it has set the hostname, prints its
// pid and exits. The holder is then the child of the host's init (or of a subreaper), which
// reaps it whenever it ends — the agent may be long gone then.

// holderReadyFd is the pipe on which the holder says it is ready: EOF with nothing written.
const holderReadyFd = 3

// RunHolderIfRequested runs this process as a pod's namespace holder, or as the start of one,
// and never returns when it was started as such (argv[0] is protocol.HolderArg0); otherwise it
// returns at once. Call it first thing in main.
func RunHolderIfRequested() {
	if len(os.Args) != 4 || os.Args[0] != protocol.HolderArg0 {
		return
	}
	hostname, ownNetwork := os.Args[2], os.Args[3] == protocol.HolderOwnNetwork
	switch os.Args[1] {
	case protocol.HolderStart:
		if err := startHolder(hostname, ownNetwork); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case protocol.HolderRun:
		runHolder(hostname, ownNetwork)
	}
	os.Exit(2)
}

// startHolder starts the holder and reports it on stdout.
func startHolder(hostname string, ownNetwork bool) error {
	ready, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer ready.Close()
	flags := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if ownNetwork {
		flags |= unix.CLONE_NEWNET
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{protocol.HolderArg0, protocol.HolderRun, hostname, os.Args[3]},
		Env:        os.Environ(),
		Dir:        "/",
		ExtraFiles: []*os.File{readyW}, // fd 3: holderReadyFd
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:     true,
			Cloneflags: flags,
		},
	}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return fmt.Errorf("start the pod's namespace holder: %w", err)
	}
	msg, _ := io.ReadAll(ready)
	if len(msg) > 0 {
		_ = cmd.Process.Kill()
		return fmt.Errorf("the pod's namespace holder: %s", msg)
	}
	st, err := procfs.ReadStat(cmd.Process.Pid)
	if err != nil {
		return fmt.Errorf("the pod's namespace holder ended at its start: %w", err)
	}
	return json.NewEncoder(os.Stdout).Encode(protocol.HolderReport{Pid: cmd.Process.Pid, PidStartTime: st.StartTime})
}

// runHolder is the holder: it sets the hostname, brings up the loopback of a network
// namespace of its own (the pod network's plugins make the rest), says it is ready, and reaps
// until it is killed.
func runHolder(hostname string, ownNetwork bool) {
	unix.CloseOnExec(holderReadyFd)
	ready := os.NewFile(holderReadyFd, "ready")
	// It holds nothing of the agent's: its working directory is /, its stdio /dev/null.
	if err := unix.Sethostname([]byte(hostname)); err != nil {
		_, _ = fmt.Fprintf(ready, "set the hostname %q: %v", hostname, err)
		os.Exit(1)
	}
	if ownNetwork {
		if err := loopbackUp(); err != nil {
			_, _ = fmt.Fprintf(ready, "bring up the pod's loopback: %v", err)
			os.Exit(1)
		}
	}
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	ready.Close()
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
		}
		<-children
	}
}

// loopbackUp brings up lo, which a new network namespace has down: a pod's containers talk to
// each other on 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

package testcontainerd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vk-static/vk-static/internal/mounts"
)

// shimSocketDir is where containerd 1.6's shims listen whatever the configuration says.
const shimSocketDir = "/run/containerd/s"

// Stop stops containerd and removes everything the instance made: its containers (runc delete
// --force), its shims (SIGKILL) and their sockets in /run/containerd/s, every mount under its
// directory (overlay root filesystems, sandbox /dev/shm, the pods' network namespaces, which
// are under its state directory and never in /run/netns; deepest first), the directory, and a
// Bridge network's link. It is an error if a shim of the instance is still running afterwards.
// Stop is idempotent.
func (c *Containerd) Stop() error {
	c.proc.Stop(stopGrace)
	c.proc = nil
	if _, err := os.Stat(c.paths.Dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	errs = append(errs, c.deleteContainers()...)
	sockets, err := c.shimSockets()
	errs = append(errs, err)
	errs = append(errs, c.killShims()...)
	for _, s := range sockets {
		if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	// A mount left in place would make RemoveAll delete through it — into a host directory a
	// sandbox had bind-mounted, say — so the directory stays when one could not be detached.
	if err := mounts.UnmountUnder(c.paths.Dir); err != nil {
		errs = append(errs, fmt.Errorf("leaving %s in place: %w", c.paths.Dir, err))
	} else {
		errs = append(errs, os.RemoveAll(c.paths.Dir))
	}
	if pids, err := c.Shims(); err != nil {
		errs = append(errs, err)
	} else if len(pids) > 0 {
		errs = append(errs, fmt.Errorf("containerd shims of %s still running after Stop: %v", c.paths.Dir, pids))
	}
	if c.bridge != nil {
		// The pods' veths went with their network namespaces; the bridge is the instance's
		// too, so that another instance in this namespace starts on a clean network.
		errs = append(errs, deleteLink(c.bridge.Name))
	}
	return errors.Join(errs...)
}

// deleteContainers force-deletes every container in the instance's runc root (kept per
// containerd namespace): runc kills what runs and removes the container's cgroups.
func (c *Containerd) deleteContainers() []error {
	var errs []error
	namespaces, _ := os.ReadDir(c.paths.RuncRoot)
	for _, ns := range namespaces {
		root := filepath.Join(c.paths.RuncRoot, ns.Name())
		containers, _ := os.ReadDir(root)
		for _, ctr := range containers {
			out, err := exec.Command(c.bin.runc, "--root", root, "delete", "--force", ctr.Name()).CombinedOutput()
			if err != nil {
				errs = append(errs, fmt.Errorf("runc delete --force %s: %w: %s", ctr.Name(), err, bytes.TrimSpace(out)))
			}
		}
	}
	return errs
}

// shimSockets are the sockets of the instance's shims, from the address file the shim writes
// into each task's bundle (state/io.containerd.runtime.v2.task/NAMESPACE/ID/address).
func (c *Containerd) shimSockets() ([]string, error) {
	addresses, err := filepath.Glob(filepath.Join(c.paths.State, "io.containerd.runtime.v2.task", "*", "*", "address"))
	if err != nil {
		return nil, err
	}
	var sockets []string
	for _, a := range addresses {
		data, err := os.ReadFile(a)
		if err != nil {
			continue
		}
		socket := strings.TrimPrefix(strings.TrimSpace(string(data)), "unix://")
		// Never anything else; the tasks of a sandbox share their shim.
		if filepath.Dir(socket) == shimSocketDir && !slices.Contains(sockets, socket) {
			sockets = append(sockets, socket)
		}
	}
	return sockets, nil
}

// killShims kills the instance's shims and waits until they are gone.
func (c *Containerd) killShims() []error {
	pids, err := c.Shims()
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, pid := range pids {
		if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("kill shim %d: %w", pid, err))
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, err := c.Shims()
		if err != nil || len(left) == 0 {
			return append(errs, err)
		}
		if time.Now().After(deadline) {
			return append(errs, fmt.Errorf("shims %v survived SIGKILL", left))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Shims are the running shim processes of this instance: containerd starts each with
// "-address SOCKET" on its command line. A killed shim whose parent does not reap it (PID 1
// of some containers) stays a zombie with no command line, and is not counted.
func (c *Containerd) Shims() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone meanwhile
		}
		args := strings.Split(string(cmdline), "\x00")
		if !strings.Contains(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-address" && args[i+1] == c.paths.Address {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids, nil
}

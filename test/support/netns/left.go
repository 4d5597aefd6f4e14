package netns

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// NetNamespace names the network namespace process pid is in ("net:[4026532…]"): the
// parent reads its child's while it runs, to find with Left what stayed in it afterwards.
func NetNamespace(pid int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
}

// KillLeft kills every process still in the network namespace ns (from NetNamespace) — what a
// child that died before its clean-up left there, a container runtime's shims that outlive
// their daemon by design — and returns their pids. The namespace goes with the last of them.
// It refuses the namespace this process is in (the machine's, usually).
func KillLeft(ns string) ([]int, error) {
	if own, err := NetNamespace(os.Getpid()); err != nil || own == ns {
		return nil, fmt.Errorf("not killing the processes of %s: it is this process's own network namespace (%v)", ns, err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var killed []int
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if in, err := NetNamespace(pid); err != nil || in != ns {
			continue // gone meanwhile, or elsewhere
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill pid %d: %w", pid, err))
			continue
		}
		killed = append(killed, pid)
	}
	return killed, errors.Join(errs...)
}

package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vk-static/vk-static/internal/netns"
)

// runInNamespace runs this vkbench again, with the same arguments, in network and mount
// namespaces of its own (internal/netns), and returns its exit code: the kubelet refuses a
// loopback node IP, so a run with -peers kubelet gives every agent netns.NodeIP, which exists
// only there. SIGINT and SIGTERM are passed on, so that the child stops its scenario and
// cleans up; whatever is still in its network namespace when it has exited (a container
// runtime's shims, had it died before its clean-up) is killed.
func runInNamespace(args []string) int {
	child, err := netns.Command(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := child.Start(); err != nil {
		_, err = netns.ExitCode(err)
		fmt.Fprintln(os.Stderr, "vkbench:", err)
		return 1
	}
	ns, nsErr := netns.NetNamespace(child.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	var waitErr error
wait:
	for {
		select {
		case sig := <-sigs:
			_ = child.Process.Signal(sig)
		case waitErr = <-done:
			break wait
		}
	}
	code, err := netns.ExitCode(waitErr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkbench:", err)
		code = 1
	}
	if nsErr != nil {
		fmt.Fprintln(os.Stderr, "vkbench: the run's network namespace:", nsErr)
		return max(code, 1)
	}
	killed, err := netns.KillLeft(ns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkbench:", err)
		code = max(code, 1)
	}
	if len(killed) > 0 {
		fmt.Fprintf(os.Stderr, "vkbench: killed %d processes left in the run's network namespace: %v\n", len(killed), killed)
		code = max(code, 1)
	}
	return code
}

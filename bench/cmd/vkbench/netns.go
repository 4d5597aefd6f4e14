package main

import (
	"fmt"
	"os"

	"github.com/vk-static/vk-static/test/support/netns"
)

// runInNamespace runs this vkbench again, with the same arguments, in network and mount
// namespaces of its own (netns.Run), and returns its exit code: the kubelet refuses a loopback
// node IP, so a run with -peers kubelet gives every agent netns.NodeIP, which exists only
// there. Processes left in the run's network namespace after it has exited are killed and fail
// the run.
func runInNamespace(args []string) int {
	code, killed, err := netns.Run(args)
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

// Command vk-static-supervisor is the process provider's container supervisor: vk-static
// starts one per container (runtime/process/supervisor), and it outlives the agent. Install it
// beside vk-static, which uses it when it finds it there. Re-executed by a supervisor as
// vk-static-init, it is the init helper that puts a workload in its container's cgroup and then
// executes it ([supervisor.RunInitIfRequested]); started as vk-static-pod, it is a
// restricted pod's namespace holder ([supervisor.RunHolderIfRequested]).
//
// It links only the supervisor, the standard library and golang.org/x/sys, so that each of
// the many supervisors on a node costs about a megabyte and a millisecond to start rather than
// the agent binary's package initialisation (TestImports keeps it so).
package main

import (
	"fmt"
	"os"

	"github.com/vk-static/vk-static/runtime/process/supervisor"
)

func main() {
	supervisor.RunInitIfRequested()   // a workload on its way into its cgroup
	supervisor.RunHolderIfRequested() // a pod's namespace holder
	dir, ok := supervisor.Requested()
	if !ok {
		fmt.Fprintln(os.Stderr, "vk-static-supervisor supervises one container for vk-static's process provider, which starts it; it is not run by hand")
		os.Exit(2)
	}
	os.Exit(supervisor.Run(dir))
}

// Package supervisor is a container's supervisor process: it starts the workload of the
// container in the directory the process runtime (package process) names, copies its output to
// the log, records its start and end (package records) and answers the runtime's watch, exec and
// attach requests on its socket (package protocol). It outlives the agent that started it.
//
// It is linked into the small vk-static-supervisor binary (cmd/vk-static-supervisor), which
// needs only the standard library and golang.org/x/sys — keep it so: nothing here may import
// lifecycle, node, client-go or klog, whose package initialisation would cost every container
// megabytes and tens of milliseconds of CPU. The agent binary links it too, for the fallback of
// re-executing itself (process.RunSupervisorIfRequested).
//
//	func main() {
//		dir, ok := supervisor.Requested()
//		if !ok { ... }
//		os.Exit(supervisor.Run(dir))
//	}
//
// What the supervisor does is described in package process's documentation ("The supervisor").
package supervisor

// Command vk-static is the node agent: it runs static pods from a manifest directory and a
// manifest URL, and pods the API server schedules to its node, on a provider, with mirror pods
// so the cluster sees them all. The command is package app; this is only the process.
package main

import (
	"os"

	"github.com/vk-static/vk-static/cmd/vk-static/app"
	"github.com/vk-static/vk-static/runtime/process"
)

func main() {
	// Without vk-static-supervisor beside it, the process runtime's container supervisors
	// are this binary, re-executed: before anything else, become one if asked to.
	process.RunSupervisorIfRequested()
	os.Exit(app.Run(os.Args[1:], os.Stdout, os.Stderr))
}

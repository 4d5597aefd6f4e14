// Command floor runs bench/floor: the least work any node agent can do, for vkbench's -peers
// floor. It takes vk-static's flags as test/support/agentproc passes them (those it has no use
// for are accepted and ignored), serves /readyz and /healthz on the healthz port, and with
// --profiling /debug/pprof there too.
package main

import (
	"context"
	"errors"
	"flag"

	"github.com/vk-static/vk-static/bench/agentflags"
	"github.com/vk-static/vk-static/bench/floor"
)

func main() { agentflags.Main("floor", run) }

func run(args []string) error {
	f := agentflags.Defaults()
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	f.Register(fs) // it uses the identity, the healthz address, the rate, profiling and the manifests
	workers := fs.Int("workers", floor.DefaultWorkers, "API writes in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.Kubeconfig == "" || f.Node == "" {
		return errors.New("--kubeconfig and --hostname-override are required")
	}
	client, err := f.Client("vkbench-floor")
	if err != nil {
		return err
	}
	a := &floor.Agent{Client: client, Node: f.Node, Workers: *workers, ManifestDir: f.ManifestDir}
	return floor.Serve(f, a.Ready, func(ctx context.Context) error { return a.Run(ctx) })
}

// Command floor runs bench/floor: the least work any node agent can do, for vkbench's -peers
// floor. It takes vk-static's flags as test/support/agentproc passes them (those it has no use
// for are accepted and ignored), serves /readyz and /healthz on the healthz port, and with
// --profiling /debug/pprof there too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/bench/agentflags"
	"github.com/vk-static/vk-static/bench/floor"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

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
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(f.QPS), f.Burst
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "vkbench-floor"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background())
	a := &floor.Agent{Client: client, Node: f.Node, Workers: *workers, ManifestDir: f.ManifestDir}

	srv, err := floor.ServeHealth(f.HealthzAddr, f.HealthzPort, f.Profiling, a.Ready)
	if err != nil {
		return err
	}
	defer srv.Close()
	return a.Run(ctx)
}

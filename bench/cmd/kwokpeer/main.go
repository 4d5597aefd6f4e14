// Command kwokpeer starts KWOK as a vkbench peer (vkbench -peers kwok). It takes the command
// line vkbench gives every agent (vk-static's flags, as test/support/agentproc passes them) plus
// --kwok and --admin-kubeconfig, registers the Node as a KWOK user would, writes KWOK's
// configuration (bench/kwok: its fast stages) under --root-dir and then replaces itself with
// KWOK (exec), so the process the bench measures and stops is KWOK's own. KWOK serves
// /healthz, /readyz and /debug/pprof on vk-static's healthz address.
package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vk-static/vk-static/bench/agentflags"
	"github.com/vk-static/vk-static/bench/kwok"
)

func main() { agentflags.Main("kwokpeer", run) }

func run(args []string) error {
	f := agentflags.Defaults()
	f.NodeIP = "127.0.0.1"
	fs := flag.NewFlagSet("kwokpeer", flag.ContinueOnError)
	f.Register(fs) // it uses the node's name and IP, the root and the healthz address
	binary := fs.String("kwok", "", "the KWOK binary (make bench builds it from bench/tools)")
	admin := fs.String("admin-kubeconfig", "", "the identity KWOK runs with: its controllers list and watch leases, which the node identity (--kubeconfig) may not")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *admin == "" || f.Node == "" || f.RootDir == "" {
		return errors.New("--kwok, --admin-kubeconfig, --hostname-override and --root-dir are required")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *admin)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kwok.RegisterNode(ctx, client, f.Node); err != nil {
		return err
	}
	if err := os.MkdirAll(f.RootDir, 0o755); err != nil {
		return err
	}
	configPath := filepath.Join(f.RootDir, "kwok.yaml")
	if err := os.WriteFile(configPath, kwok.Config(), 0o644); err != nil {
		return err
	}
	argv := kwok.Args(*binary, kwok.Options{
		Kubeconfig: *admin, Node: f.Node, ConfigPath: configPath, NodeIP: f.NodeIP,
		ServerAddress: net.JoinHostPort(f.HealthzAddr, strconv.Itoa(f.HealthzPort)),
	})
	return syscall.Exec(*binary, argv, os.Environ())
}

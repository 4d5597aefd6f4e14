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
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vk-static/vk-static/bench/kwok"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kwokpeer:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("kwokpeer", flag.ContinueOnError)
	binary := fs.String("kwok", "", "the KWOK binary (make bench builds it from bench/tools)")
	admin := fs.String("admin-kubeconfig", "", "the identity KWOK runs with: its controllers list and watch leases, which the node identity (--kubeconfig) may not")
	node := fs.String("hostname-override", "", "the node KWOK manages")
	rootDir := fs.String("root-dir", "", "where KWOK's configuration is written")
	healthzAddr := fs.String("healthz-bind-address", "127.0.0.1", "")
	healthzPort := fs.Int("healthz-port", 10248, "")
	nodeIP := fs.String("node-ip", "127.0.0.1", "")
	// vk-static's flags that agentproc and the bench pass: accepted, unused.
	for _, name := range []string{"kubeconfig", "address", "port", "pod-manifest-path", "provider", "client-ca-file", "max-pods", "kube-api-qps", "kube-api-burst", "v"} {
		fs.String(name, "", "ignored (vk-static's)")
	}
	fs.Bool("profiling", false, "ignored: KWOK always serves /debug/pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || *admin == "" || *node == "" || *rootDir == "" {
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
	if err := kwok.RegisterNode(ctx, client, *node); err != nil {
		return err
	}
	if err := os.MkdirAll(*rootDir, 0o755); err != nil {
		return err
	}
	configPath := filepath.Join(*rootDir, "kwok.yaml")
	if err := os.WriteFile(configPath, kwok.Config(), 0o644); err != nil {
		return err
	}
	argv := kwok.Args(*binary, kwok.Options{
		Kubeconfig: *admin, Node: *node, ConfigPath: configPath, NodeIP: *nodeIP,
		ServerAddress: net.JoinHostPort(*healthzAddr, strconv.Itoa(*healthzPort)),
	})
	return syscall.Exec(*binary, argv, os.Environ())
}

// Command demo starts the test control plane (test/support/testenv) and bin/vk-static with a node
// identity on the example manifests, prints the kubectl commands to look at the node and its
// mirror pods, and runs until Ctrl-C. Run it with `make demo`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/vk-static/vk-static/test/support/testenv"
)

func main() {
	agent := flag.String("agent", "bin/vk-static", "the vk-static binary")
	kubectl := flag.String("kubectl", "kubectl", "the kubectl binary to suggest")
	manifests := flag.String("manifests", "examples/manifests", "the manifest directory")
	dir := flag.String("dir", "run/demo", "where kubeconfigs and the agent's state go")
	node := flag.String("node", "demo-node", "the node name")
	flag.Parse()
	if err := run(*agent, *kubectl, *manifests, *dir, *node); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(agent, kubectl, manifests, dir, node string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fmt.Println("Starting etcd and kube-apiserver ...")
	env, err := testenv.Start(ctx, testenv.Options{Nodes: []string{node}})
	if err != nil {
		return err
	}
	defer env.Stop(false)

	admin := filepath.Join(dir, "admin.kubeconfig")
	if err := testenv.WriteKubeconfig(admin, env.AdminConfig); err != nil {
		return err
	}
	nodeCfg, err := env.NodeConfig(node)
	if err != nil {
		return err
	}
	nodeKubeconfig := filepath.Join(dir, "node.kubeconfig")
	if err := testenv.WriteKubeconfig(nodeKubeconfig, nodeCfg); err != nil {
		return err
	}

	cmd := exec.CommandContext(ctx, agent,
		"--kubeconfig", nodeKubeconfig, "--hostname-override", node,
		"--node-ip", "127.0.0.1", "--address", "127.0.0.1",
		"--pod-manifest-path", manifests, "--root-dir", filepath.Join(dir, "root"),
		"--pod-logs-dir", filepath.Join(dir, "log", "pods"), "-v", "2")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Printf(`
vk-static runs as system:node:%[1]s against %[2]s.
In another terminal:

  export KUBECONFIG=%[3]s
  %[4]s get nodes -o wide
  %[4]s get pods -A -o wide                     # the mirror pods of %[5]s
  %[4]s describe pod web-%[1]s
  %[4]s get events -A

Drop a manifest into %[5]s and watch its mirror appear. Ctrl-C stops everything.

`, node, env.Host, admin, kubectl, manifests)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("vk-static exited: %w", err)
}

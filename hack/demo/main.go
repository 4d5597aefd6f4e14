// Command demo runs a one-node cluster whose control plane vk-static runs as static pods:
// kubeadm (built by make kubeadm-testbin) writes its certificates, kubeconfigs and the
// unmodified manifests of etcd, kube-apiserver, kube-controller-manager and kube-scheduler, and
// bin/vk-static, started with kubeadm's kubelet.conf before any API server exists, runs them,
// registers its Node with the API server it has just started and makes their mirror pods. It
// prints the kubectl commands to look at the cluster and runs until Ctrl-C. Run it with
// `make demo`, as root.
//
// Everything stays in network and mount namespaces of the demo's own (test/support/netns and
// test/support/kubeadmnode, as test/e2ekubeadm): the node's address is 10.213.0.1 on that
// namespace's lo, and kubeadm's /etc/kubernetes and /var/lib/etcd are tmpfs mounts of it, gone
// with it. What the demo keeps on the machine is under -dir: the agent's state, the pods' logs
// and a copy of kubeadm's admin.conf for kubectl.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/kubeadmnode"
	"github.com/vk-static/vk-static/test/support/netns"
)

func main() {
	agent := flag.String("agent", "bin/vk-static", "the vk-static binary")
	dir := flag.String("dir", "run/demo", "where the agent's state, the pods' logs and admin.conf go")
	node := flag.String("node", "demo-cp", "the node name")
	flag.Parse()
	if err := run(*agent, *dir, *node); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(agent, dir, node string) error {
	var err error
	if agent, err = filepath.Abs(agent); err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if netns.InChild() {
		return runNode(agent, dir, node)
	}
	if os.Geteuid() != 0 {
		return errors.New("make demo runs as root: it makes network and mount namespaces of its own, and tmpfs mounts in them")
	}
	// The mount points kubeadm's paths need on the machine, made here and removed after.
	created := hostpaths.MissingDirs(hostpaths.Paths(kubeadmnode.Masks))
	defer func() {
		if err := hostpaths.RemoveDirs(created); err != nil {
			fmt.Fprintln(os.Stderr, "demo: remove the mount points made for the tmpfs masks:", err)
		}
	}()
	code, leftover, err := netns.Run([]string{"-agent", agent, "-dir", dir, "-node", node})
	if err != nil {
		return err
	}
	if len(leftover) > 0 {
		return fmt.Errorf("killed %d processes left in the demo's network namespace: %v", len(leftover), leftover)
	}
	if code != 0 {
		return fmt.Errorf("the node exited with code %d", code)
	}
	return nil
}

// runNode is the demo in its namespaces: the node's address and masks, kubeadm's phases around
// the agent's start, and the agent until a signal.
func runNode(agent, dir, node string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := netns.Enter(netns.NodeIP); err != nil {
		return err
	}
	if err := hostpaths.Mask(kubeadmnode.Masks...); err != nil {
		return err
	}
	bins, err := kubeadmnode.FindBinaries()
	if err != nil {
		return err
	}
	if err := kubeadmnode.LinkIntoPath(bins); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kubeadm := kubeadmnode.Kubeadm{Path: bins.Kubeadm, Home: dir}
	config := filepath.Join(dir, "kubeadm.yaml")
	if err := os.WriteFile(config, []byte(kubeadmnode.Config(node, netns.NodeIP, nil)), 0o600); err != nil {
		return err
	}
	phase := func(args ...string) error {
		fmt.Printf("kubeadm init phase %s\n", strings.Join(args, " "))
		_, err := kubeadm.Run(ctx, append(append([]string{"init", "phase"}, args...), "--config", config)...)
		return err
	}
	for _, p := range [][]string{{"certs", "all"}, {"kubeconfig", "all"}} {
		if err := phase(p...); err != nil {
			return err
		}
	}

	// The agent starts now, before there is a manifest or an API server, as the kubelet of
	// `kubeadm init` does. --stop-pods-on-exit: the control plane stops with the demo.
	fmt.Println("Starting vk-static with kubeadm's kubelet.conf")
	cmd := exec.Command(agent,
		"--kubeconfig", kubeadmnode.KubeletConf, "--pod-manifest-path", kubeadmnode.ManifestDir,
		"--client-ca-file", kubeadmnode.CAFile, "--hostname-override", node,
		"--node-ip", netns.NodeIP.String(), "--address", netns.NodeIP.String(),
		"--provider", "process", "--process-allow-host-network", "--stop-pods-on-exit",
		"--root-dir", filepath.Join(dir, "root"), "--pod-logs-dir", filepath.Join(dir, "log", "pods"),
		"-v", "2")
	logFile, err := os.Create(filepath.Join(dir, "vk-static.log"))
	if err != nil {
		return err
	}
	defer func() { _ = logFile.Close() }()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A process group of its own: Ctrl-C reaches the demo, which stops the agent once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{}) // closed once the agent has exited, with waitErr
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stopAgent := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		return waitErr
	}

	err = func() error {
		for _, p := range [][]string{{"etcd", "local"}, {"control-plane", "all"}} {
			if err := phase(p...); err != nil {
				return err
			}
		}
		fmt.Println("Waiting for kube-apiserver, a static pod of the agent's, to answer ...")
		if err := waitReady(ctx, bins.Kubectl, exited); err != nil {
			return err
		}
		// RBAC for kubernetes-admin, bootstrap tokens and the API server's calls to the
		// agent's API (kubectl logs).
		return phase("bootstrap-token")
	}()
	if err != nil {
		_ = stopAgent()
		return err
	}
	admin := filepath.Join(dir, "admin.conf")
	if err := copyFile(kubeadmnode.AdminConf, admin); err != nil {
		_ = stopAgent()
		return err
	}
	enter := fmt.Sprintf("nsenter --net=/proc/%d/ns/net", os.Getpid())
	fmt.Printf(`
vk-static runs kubeadm's control plane as static pods on node %[1]s (%[2]s, in the demo's
network namespace). In another terminal, as root:

  alias k='%[3]s %[4]s --kubeconfig %[5]s'
  k get nodes -o wide
  k get pods -n kube-system -o wide        # the mirror pods of kubeadm's manifests
  k logs -n kube-system kube-apiserver-%[1]s --tail 5
  k run hello --image busybox --restart Never --command -- sh -c 'echo hello from %[1]s; sleep 3600'
  k logs hello                             # the process provider runs the command on the host
  k get events -A

The agent logs to %[6]s, the pods under %[7]s. Ctrl-C stops everything.

`, node, netns.NodeIP, enter, bins.Kubectl, admin, logFile.Name(), filepath.Join(dir, "log", "pods"))
	select {
	case <-ctx.Done():
		fmt.Println("Stopping the agent and, with it, the control plane ...")
		if err := stopAgent(); err != nil && !isSignal(err) {
			return fmt.Errorf("vk-static: %w", err)
		}
		return nil
	case <-exited:
		return fmt.Errorf("vk-static exited: %v (its log: %s)", waitErr, logFile.Name())
	}
}

// waitReady waits until the API server answers /readyz with kubeadm's super-admin.conf
// (admin.conf has no rights before the bootstrap-token phase), the agent exits, or ctx ends.
func waitReady(ctx context.Context, kubectl string, exited <-chan struct{}) error {
	deadline := time.Now().Add(5 * time.Minute)
	var last string
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := exec.CommandContext(rctx, kubectl, "--kubeconfig", kubeadmnode.SuperAdminConf, "get", "--raw", "/readyz").CombinedOutput()
		cancel()
		if err == nil {
			return nil
		}
		last = strings.TrimSpace(string(out))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-exited:
			return errors.New("vk-static exited")
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver did not answer /readyz within 5 minutes: %s", last)
		}
	}
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o600)
}

// isSignal reports whether err is the agent's exit on the SIGTERM that stopped it.
func isSignal(err error) bool {
	var exitErr *exec.ExitError
	return errors.As(err, &exitErr) && !exitErr.Exited()
}

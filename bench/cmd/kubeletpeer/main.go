// Command kubeletpeer starts the kubelet as a vkbench peer (vkbench -peers kubelet, scenario
// cri-50). It takes the command line vkbench gives every agent (vk-static's flags, as
// test/support/agentproc passes them, the scenario's --container-runtime-endpoint among them)
// plus --kubelet, writes the kubelet's configuration (bench/kubelet) under --root-dir and then
// replaces itself with the kubelet (exec), so that the process the bench measures and stops
// is the kubelet's own. The kubelet serves /healthz, not /readyz, on vk-static's healthz
// address; vkbench polls that instead.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"syscall"

	"github.com/vk-static/vk-static/bench/agentflags"
	"github.com/vk-static/vk-static/bench/kubelet"
)

func main() {
	binary, o, err := parse(os.Args[1:])
	if err == nil {
		err = run(binary, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeletpeer:", err)
		os.Exit(1)
	}
}

// parse reads vkbench's command line into the kubelet binary's path and its options.
func parse(args []string) (string, kubelet.Options, error) {
	f := agentflags.Defaults()
	fs := flag.NewFlagSet("kubeletpeer", flag.ContinueOnError)
	f.Register(fs) // all but --provider (the kubelet always uses the CRI) and --profiling (its pprof is on its authenticated API)
	binary := fs.String("kubelet", "", "the kubelet binary (make bench-full builds it from bench/kubelet/tools)")
	if err := fs.Parse(args); err != nil {
		return "", kubelet.Options{}, err
	}
	if fs.NArg() > 0 {
		return "", kubelet.Options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for name, v := range map[string]string{"kubelet": *binary, "hostname-override": f.Node, "node-ip": f.NodeIP,
		"root-dir": f.RootDir, "kubeconfig": f.Kubeconfig, "pod-manifest-path": f.ManifestDir, "container-runtime-endpoint": f.RuntimeEndpoint} {
		if v == "" {
			return "", kubelet.Options{}, errors.New("--" + name + " is required")
		}
	}
	if f.Address == "" {
		f.Address = f.NodeIP
	}
	return *binary, kubelet.Options{
		Node: f.Node, NodeIP: f.NodeIP, Address: f.Address, Port: f.Port,
		HealthzAddr: f.HealthzAddr, HealthzPort: f.HealthzPort, ManifestDir: f.ManifestDir, RootDir: f.RootDir,
		Kubeconfig: f.Kubeconfig, ClientCAFile: f.ClientCAFile, RuntimeEndpoint: f.RuntimeEndpoint,
		MaxPods: f.MaxPods, QPS: f.QPS, Burst: f.Burst, Verbosity: f.Verbosity,
	}, nil
}

// run writes the configuration and execs the kubelet.
func run(binary string, o kubelet.Options) error {
	cfg, err := kubelet.Config(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.RootDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.ConfigPath(), cfg, 0o644); err != nil {
		return err
	}
	if err := syscall.Exec(binary, kubelet.Args(binary, o), os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", binary, err)
	}
	return nil // not reached
}

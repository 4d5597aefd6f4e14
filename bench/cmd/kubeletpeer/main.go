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
	var o kubelet.Options
	fs := flag.NewFlagSet("kubeletpeer", flag.ContinueOnError)
	binary := fs.String("kubelet", "", "the kubelet binary (make bench-full builds it from bench/kubelet/tools)")
	fs.StringVar(&o.Node, "hostname-override", "", "the node name")
	fs.StringVar(&o.NodeIP, "node-ip", "", "the node's address: not a loopback one, which the kubelet refuses")
	fs.StringVar(&o.Address, "address", "", "the kubelet API's address")
	fs.IntVar(&o.Port, "port", 10250, "the kubelet API's port")
	fs.StringVar(&o.HealthzAddr, "healthz-bind-address", "127.0.0.1", "")
	fs.IntVar(&o.HealthzPort, "healthz-port", 10248, "")
	fs.StringVar(&o.ManifestDir, "pod-manifest-path", "", "the static pods' directory")
	fs.StringVar(&o.RootDir, "root-dir", "", "the kubelet's root directory; its configuration is written there")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "the node identity")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", "", "the CA of the API server's kubelet client certificate")
	fs.StringVar(&o.RuntimeEndpoint, "container-runtime-endpoint", "", "the CRI endpoint (unix://…)")
	fs.IntVar(&o.MaxPods, "max-pods", 110, "")
	fs.Float64Var(&o.QPS, "kube-api-qps", -1, "the API client's rate (≤ 0: as --kube-api-burst, the kubelet has no unlimited setting)")
	fs.IntVar(&o.Burst, "kube-api-burst", 1000, "")
	fs.IntVar(&o.Verbosity, "v", 1, "the kubelet's log verbosity")
	// vk-static's flags that agentproc and the bench pass: accepted, unused.
	fs.String("provider", "", "ignored (vk-static's; the kubelet always uses the CRI)")
	fs.Bool("profiling", false, "ignored: the kubelet serves /debug/pprof only on its authenticated API")
	if err := fs.Parse(args); err != nil {
		return "", o, err
	}
	if fs.NArg() > 0 {
		return "", o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for name, v := range map[string]string{"kubelet": *binary, "hostname-override": o.Node, "node-ip": o.NodeIP,
		"root-dir": o.RootDir, "kubeconfig": o.Kubeconfig, "pod-manifest-path": o.ManifestDir, "container-runtime-endpoint": o.RuntimeEndpoint} {
		if v == "" {
			return "", o, errors.New("--" + name + " is required")
		}
	}
	if o.Address == "" {
		o.Address = o.NodeIP
	}
	return *binary, o, nil
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

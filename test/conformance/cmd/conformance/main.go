// Command conformance runs the upstream Kubernetes e2e [NodeConformance] specs against a
// one-node cluster whose node is vk-static or, as the reference, the kubelet (package
// test/conformance; make conformance is the way to call it). As root only: the run goes into
// network and mount namespaces of its own (test/support/netns) with the node's address on their
// lo, where the control plane, containerd's bridge network, the registry and the agent live
// and die. `conformance compare A.json B.json` prints two runs' summaries side by side
// (Markdown). It prints a one-line verdict and exits 0 when every selected spec passed or was
// skipped, 1 when one failed or the run could not be made, 2 on a bad command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/bench/kubelet"
	"github.com/vk-static/vk-static/test/conformance"
	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/netns"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) > 0 && args[0] == "compare" {
		return compare(args[1:])
	}
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	var o conformance.Options
	fs.StringVar(&o.Agent, "agent", conformance.AgentVKStatic, "the agent under test: vk-static or kubelet (the reference)")
	fs.StringVar(&o.Provider, "provider", conformance.ProviderCRI, "vk-static's provider: cri (containerd with a bridge network) or process (host processes, no images)")
	fs.StringVar(&o.AgentBinary, "agent-binary", "bin/vk-static", "vk-static's binary (make build)")
	fs.StringVar(&o.BinDir, "bin", "", "the directory make conformance-bin builds into (e2e.test, ginkgo, kube-scheduler, kubelet, agnhost, nonewprivs)")
	fs.StringVar(&o.TestBin, "testbin", os.Getenv("VK_STATIC_TESTBIN"), "the control plane's directory (make testbin)")
	toolsDir := fs.String("tools", "test/conformance/tools", "the Go module the binaries are built from: k8s.io/kubernetes's source is found through it")
	fs.StringVar(&o.Out, "out", "conformance-out", "where the JUnit report, summary.json and the logs go")
	fs.StringVar(&o.Focus, "focus", conformance.DefaultFocus, "ginkgo's focus")
	fs.StringVar(&o.Skip, "skip", conformance.DefaultSkip, "ginkgo's skip")
	fs.StringVar(&o.LabelFilter, "label-filter", "", "ginkgo's label filter (with -provider process and the default focus: NodeConformance, and the focus is the specs a host-process runtime can pass)")
	fs.IntVar(&o.Procs, "procs", 8, "ginkgo's parallel processes")
	fs.DurationVar(&o.Timeout, "timeout", 6*time.Hour, "the suite's time bound (ginkgo --timeout)")
	fs.IntVar(&o.Verbosity, "agent-v", 2, "the agent's log verbosity")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.Var(klogFlags.Lookup("v").Value, "v", "the harness's log verbosity")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "conformance: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.BinDir == "" || o.TestBin == "" {
		fmt.Fprintln(os.Stderr, "conformance: -bin and -testbin are required (make conformance sets them)")
		return 2
	}

	if !netns.InChild() {
		// The kubelet's host paths are hidden behind tmpfs mounts in the child's mount
		// namespace; the directories made for them on the machine go once it has ended.
		created := hostpaths.MissingDirs(hostpaths.Paths(kubelet.HostPaths))
		code, leftover, err := netns.Run(args)
		if err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			code = max(code, 1)
		}
		if len(leftover) > 0 {
			fmt.Fprintf(os.Stderr, "conformance: killed %d processes left in the run's network namespace: %v\n", len(leftover), leftover)
			code = max(code, 1)
		}
		if err := hostpaths.RemoveDirs(created); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			code = max(code, 1)
		}
		return code
	}
	if err := netns.Enter(netns.NodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = klog.NewContext(ctx, klog.Background().WithName("conformance"))
	var err error
	for _, p := range []*string{&o.AgentBinary, &o.BinDir, &o.TestBin, &o.Out} {
		if *p, err = filepath.Abs(*p); err != nil {
			fmt.Fprintln(os.Stderr, "conformance:", err)
			return 2
		}
	}
	if o.KubernetesDir, err = moduleDir(*toolsDir, "k8s.io/kubernetes"); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	o.Commit = gitOutput("rev-parse", "--short=7", "HEAD")
	o.AgentVersion = agentVersion(o)
	o.Output = os.Stdout
	r, err := conformance.Run(ctx, o)
	if r != nil {
		fmt.Println(r.Verdict())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	if r.Failed > 0 {
		return 1
	}
	return 0
}

// moduleDir is the module cache's copy of module, as the tools module requires it.
func moduleDir(toolsDir, module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = toolsDir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s in %s: %w", module, toolsDir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func gitOutput(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// agentVersion is what the agent binary says it is (vk-static version: git describe of the
// tree it was built from, "-dirty" with uncommitted changes), or the kubelet's release.
func agentVersion(o conformance.Options) string {
	if o.Agent == conformance.AgentKubelet {
		out, _ := exec.Command(filepath.Join(o.BinDir, "kubelet"), "--version").Output()
		return strings.TrimSpace(string(out))
	}
	out, _ := exec.Command(o.AgentBinary, "version").Output()
	return strings.TrimSpace(string(out))
}

// compare prints the side-by-side of two summary.json files (conformance compare A B) in
// Markdown, as docs/conformance.md shows it.
func compare(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance compare A/summary.json B/summary.json")
		return 2
	}
	a, err := conformance.ReadResult(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	b, err := conformance.ReadResult(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	fmt.Print(conformance.Compare(a, b))
	return 0
}

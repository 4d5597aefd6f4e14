// Command vkbench runs vk-static's benchmark scenarios against a real control plane and the
// built agent, prints a table and writes the results as JSON; `vkbench compare OLD NEW`
// puts two result files side by side. See docs/performance.md.
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
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vk-static/vk-static/bench"
	"github.com/vk-static/vk-static/bench/kubelet"
	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/testenv"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "compare" {
		os.Exit(compare(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:]))
}

func usage(fs *flag.FlagSet) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "usage: vkbench [flags]          run scenarios\n       vkbench compare OLD.json NEW.json\n\nscenarios: %s\n\nflags:\n",
			strings.Join(bench.ScenarioNames(false), ", "))
		fs.PrintDefaults()
	}
}

func run(args []string) int {
	fs := flag.NewFlagSet("vkbench", flag.ContinueOnError)
	fs.Usage = usage(fs)
	scenarios := fs.String("scenarios", "quick", "comma-separated scenario names, or quick (make bench) or all (make bench-full)")
	agent := fs.String("agent", "bin/vk-static", "the agent binary under test")
	out := fs.String("out", "bench/results/last.json", "where the JSON results go")
	profiles := fs.String("profiles", "", "directory for the agent's CPU and heap profiles (default: none)")
	qps := fs.Float64("agent-qps", bench.DefaultAgentQPS, "the agent's --kube-api-qps (-1: no client-side limit)")
	burst := fs.Int("agent-burst", bench.DefaultAgentBurst, "the agent's --kube-api-burst")
	parallel := fs.Int("parallel", bench.DefaultParallel, "requests the load driver keeps in flight")
	idle := fs.Duration("idle", 60*time.Second, "idle-1k's measuring window")
	agentArgs := fs.String("agent-args", "", "extra agent flags, space-separated (e.g. '--pod-sync-workers=32')")
	keep := fs.Bool("keep", false, "keep the work directory (agent logs) and control-plane logs")
	peersFlag := fs.String("peers", "", "comma-separated peers to run beside vk-static, alternating, in the scenarios that apply (api-1k, api-10k: floor and kwok; static-1k: floor; cri-50: kubelet and crifloor): floor, kwok, kubelet, crifloor, baseline (another vk-static build, -baseline; every scenario with peers). With kubelet the whole run is in a network namespace of its own (root), every agent with --node-ip "+netns.NodeIP.String())
	rounds := fs.Int("rounds", 3, "with -peers: rounds per peer; the tables show medians")
	floorBin := fs.String("floor", "", "with -peers floor: the floor binary (default: go build ./bench/cmd/floor into the work dir)")
	rounds10k := fs.Int("rounds-10k", 0, "with -peers: rounds per peer of api-10k, minutes each (default: -rounds)")
	kwokBin := fs.String("kwok", "", "with -peers kwok: the KWOK binary (make bench builds it from bench/tools)")
	baselineBin := fs.String("baseline", "", "with -peers baseline: another vk-static binary (e.g. the build before a change), run with the same flags in every scenario that has peers")
	kubeletBin := fs.String("kubelet", "", "with -peers kubelet: the kubelet binary (make bench-full builds it from bench/kubelet/tools)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	names, err := selectScenarios(*scenarios)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	peerNames, err := selectPeers(*peersFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var nodeIP string
	if slices.Contains(peerNames, bench.PeerKubelet) {
		if *kubeletBin == "" {
			fmt.Fprintln(os.Stderr, "-peers kubelet needs -kubelet (make bench-full builds it from bench/kubelet/tools)")
			return 2
		}
		// The kubelet refuses a loopback node IP: the whole run (control plane, containerd,
		// every agent) goes into a network namespace with another address on its lo.
		// The kubelet's own paths on the machine are hidden there behind tmpfs mounts: the
		// directories created for those mounts are removed once the namespace is gone.
		if !netns.InChild() {
			created := hostpaths.MissingDirs(hostpaths.Paths(kubelet.HostPaths))
			code := runInNamespace(args)
			if err := hostpaths.RemoveDirs(created); err != nil {
				fmt.Fprintln(os.Stderr, "vkbench:", err)
				code = max(code, 1)
			}
			return code
		}
		if err := netns.Enter(netns.NodeIP); err != nil {
			fmt.Fprintln(os.Stderr, "vkbench:", err)
			return 1
		}
		if err := hostpaths.Mask(kubelet.HostPaths...); err != nil {
			fmt.Fprintln(os.Stderr, "vkbench:", err)
			return 1
		}
		nodeIP = netns.NodeIP.String()
		fmt.Fprintf(os.Stderr, "in a network namespace of its own: every agent has --node-ip %s\n", nodeIP)
	}
	binary, err := filepath.Abs(*agent)
	if err == nil {
		_, err = os.Stat(binary)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent binary: %v (run `make build`)\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	workDir, err := os.MkdirTemp("", "vkbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *profiles != "" {
		if err := os.MkdirAll(*profiles, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Fprintf(os.Stderr, "starting the control plane (work dir %s)\n", workDir)
	var envOpts testenv.Options
	if *profiles != "" {
		envOpts.ExtraAPIServerArgs = []string{"--profiling=true"} // for its CPU profile of each phase
	}
	env, err := testenv.Start(ctx, envOpts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		env.Stop(*keep)
		if *keep {
			fmt.Fprintf(os.Stderr, "kept: %s (agents), %s (control plane)\n", workDir, env.Dir)
		} else if err := mounts.UnmountUnder(workDir); err != nil {
			// RemoveAll would delete through a mount left in place (the kubelet's root is
			// bind-mounted on itself, pods' volumes below it), into whatever it shows.
			fmt.Fprintf(os.Stderr, "vkbench: leaving %s in place: %v\n", workDir, err)
		} else {
			_ = os.RemoveAll(workDir)
		}
	}()

	peers, err := preparePeers(peerNames, binary, peerBinaries{floor: *floorBin, kwok: *kwokBin, kubelet: *kubeletBin, baseline: *baselineBin}, workDir, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}

	r := &bench.Runner{
		Env: env, AgentBinary: binary, WorkDir: workDir, ProfileDir: *profiles,
		AgentQPS: float32(*qps), AgentBurst: *burst, Parallel: *parallel, Idle: *idle, Log: os.Stderr,
		AgentArgs: strings.Fields(*agentArgs), NodeIP: nodeIP,
	}
	rep := &bench.Report{
		Date: time.Now().UTC().Format(time.RFC3339), Commit: commit(), GoVersion: runtime.Version(),
		CPUs: runtime.NumCPU(), LoadAvg: loadAvg(), Agent: agentVersion(binary),
	}
	all := bench.Scenarios()
	failed := false
	// save writes what has been measured so far, after every scenario: a long run (api-10k
	// beside its peers takes half an hour) can be read before it ends, and an interrupted one
	// keeps its finished scenarios.
	save := func() error {
		if len(rep.Results) == 0 {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return err
		}
		return bench.WriteJSON(*out, rep)
	}
	for _, n := range names {
		if err := save(); err != nil {
			fmt.Fprintf(os.Stderr, "write results: %v\n", err)
		}
		if len(peers) > 0 && len(all[n].Peers) > 0 {
			k := *rounds
			if n == "api-10k" && *rounds10k > 0 {
				k = *rounds10k
			}
			runs, err := r.RunPeers(ctx, all[n], peers, k)
			rep.Peers = append(rep.Peers, runs...)
			if last := lastOfPeer(runs, bench.PeerVKStatic); last != nil { // for compare: the last good run, if any
				rep.Results = append(rep.Results, last)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "FAIL %v\n", err)
				failed = true
				if errors.Is(err, context.Canceled) {
					break
				}
			}
			continue
		}
		res, err := r.Run(ctx, all[n])
		if res != nil {
			rep.Results = append(rep.Results, res) // with its failure, if any: what it measured
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL %v\n", err)
			failed = true
			if errors.Is(err, context.Canceled) {
				break
			}
		}
	}
	if len(rep.Results) > 0 {
		if err := save(); err != nil {
			fmt.Fprintf(os.Stderr, "write results: %v\n", err)
			failed = true
		} else {
			fmt.Fprintf(os.Stderr, "results: %s\n", *out)
		}
		fmt.Printf("\ntree %s, agent %s, %s, %d CPUs, load average at start %s\n\n", rep.Commit, rep.Agent, rep.Date, rep.CPUs, rep.LoadAvg)
		bench.WriteTable(os.Stdout, rep.Results)
		if len(rep.Peers) > 0 {
			bench.WritePeerTable(os.Stdout, rep.Peers, append([]string{bench.PeerVKStatic}, peerNames...))
		}
		// Last, where it cannot be missed: every failed run, of every peer and round.
		fmt.Println()
		if bench.WriteFailures(os.Stdout, slices.Concat(rep.Peers, singleRuns(rep.Results))) != nil {
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

// selectPeers parses -peers.
func selectPeers(spec string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(spec, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case bench.PeerFloor, bench.PeerKWOK, bench.PeerKubelet, bench.PeerCRIFloor, bench.PeerBaseline:
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		default:
			return nil, fmt.Errorf("unknown peer %q (have: %s, %s, %s, %s, %s)", p, bench.PeerFloor, bench.PeerKWOK, bench.PeerKubelet, bench.PeerCRIFloor, bench.PeerBaseline)
		}
	}
	return out, nil
}

// peerBinaries are the peers' binaries given on the command line.
type peerBinaries struct{ floor, kwok, kubelet, baseline string }

// preparePeers returns vk-static and the peers named, in that order, with their binaries:
// the floor's given or built into dir, KWOK behind bench/cmd/kwokpeer (built into dir),
// which runs it with the admin identity written into dir, and the kubelet behind
// bench/cmd/kubeletpeer (built into dir), which writes its configuration; the baseline is
// the vk-static binary given.
func preparePeers(names []string, agent string, bins peerBinaries, dir string, env *testenv.Env) ([]bench.Peer, error) {
	if len(names) == 0 {
		return nil, nil
	}
	peers := []bench.Peer{{Name: bench.PeerVKStatic, Binary: agent}}
	for _, name := range names {
		switch name {
		case bench.PeerFloor:
			bin, err := toolBinary(bins.floor, dir, "./bench/cmd/floor", "-floor")
			if err != nil {
				return nil, fmt.Errorf("floor binary: %w", err)
			}
			peers = append(peers, bench.Peer{Name: name, Binary: bin})
		case bench.PeerBaseline:
			if bins.baseline == "" {
				return nil, errors.New("-peers baseline needs -baseline (another vk-static binary)")
			}
			bin, err := toolBinary(bins.baseline, dir, "", "-baseline")
			if err != nil {
				return nil, fmt.Errorf("baseline binary: %w", err)
			}
			peers = append(peers, bench.Peer{Name: name, Binary: bin})
		case bench.PeerCRIFloor:
			bin, err := toolBinary("", dir, "./bench/cmd/crifloor", "")
			if err != nil {
				return nil, fmt.Errorf("crifloor binary: %w", err)
			}
			peers = append(peers, bench.Peer{Name: name, Binary: bin})
		case bench.PeerKWOK:
			if bins.kwok == "" {
				return nil, errors.New("-peers kwok needs -kwok (make bench builds KWOK from bench/tools)")
			}
			kwok, err := toolBinary(bins.kwok, dir, "", "-kwok")
			if err != nil {
				return nil, fmt.Errorf("KWOK binary: %w", err)
			}
			launcher, err := toolBinary("", dir, "./bench/cmd/kwokpeer", "")
			if err != nil {
				return nil, fmt.Errorf("kwokpeer binary: %w", err)
			}
			admin := filepath.Join(dir, "admin.kubeconfig")
			if err := testenv.WriteKubeconfig(admin, env.AdminConfig); err != nil {
				return nil, err
			}
			peers = append(peers, bench.Peer{Name: name, Binary: launcher, Args: []string{"--kwok", kwok, "--admin-kubeconfig", admin}})
		case bench.PeerKubelet:
			kubelet, err := toolBinary(bins.kubelet, dir, "", "-kubelet")
			if err != nil {
				return nil, fmt.Errorf("kubelet binary: %w", err)
			}
			launcher, err := toolBinary("", dir, "./bench/cmd/kubeletpeer", "")
			if err != nil {
				return nil, fmt.Errorf("kubeletpeer binary: %w", err)
			}
			peers = append(peers, bench.Peer{Name: name, Binary: launcher, Args: []string{"--kubelet", kubelet}, ReadyPath: "/healthz"})
		}
	}
	return peers, nil
}

// toolBinary is the binary given, or (with pkg) one built from this tree into dir.
func toolBinary(given, dir, pkg, flagName string) (string, error) {
	if given != "" || pkg == "" {
		path, err := filepath.Abs(given)
		if err == nil {
			_, err = os.Stat(path)
		}
		return path, err
	}
	path := filepath.Join(dir, filepath.Base(pkg))
	// With the agent's build tags: without grpcnotrace the floor links html/template through
	// gRPC's x/net/trace (its CRI half), which keeps every exported method — a 73 MB binary
	// whose pages put about 18 MB more in its resident set than the 42 MB one. Without cgo, as
	// make build builds the agent: the dynamic loader's and libc's pages (~2.7 MB) would be in
	// a peer's resident set and not in vk-static's.
	cmd := exec.Command("go", "build", "-tags", agentproc.BuildTags, "-o", path, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		hint := ""
		if flagName != "" {
			hint = ", or pass " + flagName
		}
		return "", fmt.Errorf("go build %s (run vkbench from the repository root%s): %w", pkg, hint, err)
	}
	return path, nil
}

// lastOfPeer is peer's last good run in runs, else its last failed one, or nil.
func lastOfPeer(runs []*bench.Result, peer string) *bench.Result {
	var last *bench.Result
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Peer == "" && peer == bench.PeerVKStatic || runs[i].Peer == peer && peer != bench.PeerVKStatic {
			if !runs[i].Failed() {
				return runs[i]
			}
			if last == nil {
				last = runs[i]
			}
		}
	}
	return last
}

// singleRuns are the results that are not a round of a -peers run (those are in Report.Peers).
func singleRuns(results []*bench.Result) []*bench.Result {
	var out []*bench.Result
	for _, r := range results {
		if r.Round == 0 {
			out = append(out, r)
		}
	}
	return out
}

func selectScenarios(spec string) ([]string, error) {
	switch spec {
	case "quick":
		return bench.ScenarioNames(true), nil
	case "all":
		return bench.ScenarioNames(false), nil
	}
	all := bench.Scenarios()
	var names []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if _, ok := all[n]; !ok {
			return nil, fmt.Errorf("unknown scenario %q (have: %s)", n, strings.Join(bench.ScenarioNames(false), ", "))
		}
		names = append(names, n)
	}
	return names, nil
}

func compare(args []string) int {
	fs := flag.NewFlagSet("vkbench compare", flag.ContinueOnError)
	threshold := fs.Float64("threshold", 0.1, "relative differences below this are shown as ~ (noise)")
	if err := fs.Parse(args); err != nil || fs.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: vkbench compare [-threshold 0.1] OLD.json NEW.json")
		return 2
	}
	old, err := bench.ReadJSON(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cur, err := bench.ReadJSON(fs.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := bench.Compare(os.Stdout, old, cur, *threshold); err != nil {
		fmt.Fprintf(os.Stderr, "vkbench compare: failed runs: %v\n", err)
		return 1
	}
	return 0
}

func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func agentVersion(binary string) string {
	out, err := exec.Command(binary, "version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

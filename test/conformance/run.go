package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/bench/kubelet"
	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/test/support/childproc"
	"github.com/vk-static/vk-static/test/support/hostpaths"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// The kubelet's usual selection for a node: the node conformance specs, without those that
// need the whole node (Serial), break it (Disruptive), take long (Slow), are known flaky, or
// need a feature beyond the defaults.
const (
	DefaultFocus = `\[NodeConformance\]`
	DefaultSkip  = `\[Serial\]|\[Disruptive\]|\[Slow\]|\[Flaky\]|\[Feature:`
)

// ProcessFocus is the default selection for --provider process: the node conformance specs
// (LabelFilter NodeConformance) that a host-process runtime can pass at all — no image's files
// or entrypoint, no network namespace of the pod's own, no root in the container, no volume
// mounted at a path the host lacks. Those are the node's lease and admission (NodeLease,
// PodOSRejection, RuntimeClass), commands of the host's shell and their environment (Downward
// API, ConfigMap and Secret variables, Variable Expansion), exit codes, logs and termination
// messages (Container Runtime blackbox, Kubelet's busybox commands, InitContainer), sleep
// hooks, exec probes, and running as a given non-root user (docs/conformance.md).
const ProcessFocus = `NodeLease|PodOSRejection|RuntimeClass|\[sig-node\] Downward API|\[sig-node\] ConfigMap|` +
	`\[sig-node\] Secrets|Variable Expansion|Container Runtime blackbox|Kubelet when scheduling a busybox command|` +
	`InitContainer|Lifecycle [Ss]leep|Probing container .*exec|runAsUser should run the container with uid 65534`

// The providers of vk-static the run knows.
const (
	ProviderCRI     = "cri"
	ProviderProcess = "process"
)

// Options configure Run.
type Options struct {
	// Agent is AgentVKStatic or AgentKubelet; Provider is vk-static's (ProviderCRI or
	// ProviderProcess; the kubelet always runs on the CRI).
	Agent, Provider string
	// AgentBinary is vk-static's binary (make build), the supervisor beside it.
	AgentBinary string
	// BinDir holds what make conformance-bin builds: e2e.test, ginkgo, kube-scheduler, the
	// kubelet, agnhost, nonewprivs.
	BinDir string
	// TestBin holds the control plane (make testbin): etcd, kube-apiserver,
	// kube-controller-manager, kubectl.
	TestBin string
	// KubernetesDir is k8s.io/kubernetes's source (the module cache's copy) for the files the
	// upstream images add.
	KubernetesDir string
	// Out receives the JUnit report, summary.json, e2e.log and the components' logs.
	Out string
	// Focus and Skip are ginkgo's regular expressions, LabelFilter its label filter (all must
	// match); Procs its parallel processes; Timeout bounds the suite (ginkgo --timeout). With
	// the process provider, the default focus means ProcessFocus among the NodeConformance
	// specs.
	Focus, Skip, LabelFilter string
	Procs                    int
	Timeout                  time.Duration
	// Node is the node's name.
	Node string
	// Commit is the commit measured (HEAD of the checkout) and AgentVersion what the agent's
	// binary says it is (vk-static's version tells a build with uncommitted changes): both
	// recorded in the summary.
	Commit, AgentVersion string
	// Verbosity is the agent's -v.
	Verbosity int
	// Output gets the suite's progress (ginkgo's output); nil: none.
	Output io.Writer
}

// Result is a run's summary.json: what was run, on what, and every selected spec's outcome.
type Result struct {
	Agent    string  `json:"agent"`
	Provider string  `json:"provider,omitempty"`
	Commit   string  `json:"commit"`
	Version  string  `json:"agentVersion"`
	Date     string  `json:"date"`
	Focus    string  `json:"focus"`
	Skip     string  `json:"skip"`
	Labels   string  `json:"labelFilter,omitempty"`
	Procs    int     `json:"procs"`
	Seconds  float64 `json:"seconds"` // the suite's wall time
	Counts
	Specs []Spec `json:"specs"`
}

// Verdict is the one-line summary.
func (r *Result) Verdict() string {
	agent := r.Agent
	if r.Provider != "" {
		agent += " --provider " + r.Provider
	}
	built := r.Version // what the binary says it was built from
	if built == "" {
		built = "checkout " + r.Commit
	}
	return fmt.Sprintf("conformance: %s (%s): %d passed, %d failed, %d skipped of %d specs in %s",
		agent, built, r.Passed, r.Failed, r.Skipped, len(r.Specs), (time.Duration(r.Seconds) * time.Second).String())
}

func (o *Options) validate() error {
	switch o.Agent {
	case AgentKubelet:
		o.Provider = ""
	case AgentVKStatic:
		if o.Provider != ProviderCRI && o.Provider != ProviderProcess {
			return fmt.Errorf("provider %q: %s or %s", o.Provider, ProviderCRI, ProviderProcess)
		}
	default:
		return fmt.Errorf("agent %q: %s or %s", o.Agent, AgentVKStatic, AgentKubelet)
	}
	if o.Focus == "" {
		o.Focus = DefaultFocus
	}
	if o.Provider == ProviderProcess && o.Focus == DefaultFocus && o.LabelFilter == "" {
		o.Focus, o.LabelFilter = ProcessFocus, "NodeConformance"
	}
	if o.Procs <= 0 {
		o.Procs = 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 6 * time.Hour
	}
	if o.Node == "" {
		o.Node = "conformance-node"
	}
	for _, b := range []string{"e2e.test", "ginkgo", "kube-scheduler", "kubelet", "agnhost", "nonewprivs"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return fmt.Errorf("%s: run make conformance-bin: %w", b, err)
		}
	}
	return nil
}

// Run runs the suite once, in the network and mount namespaces the caller is in (which must
// be the run's own: test/support/netns), and cleans up everything it started, whatever happens.
func Run(ctx context.Context, o Options) (_ *Result, err error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	logger := klog.FromContext(ctx)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vk-static-conformance-")
	if err != nil {
		return nil, err
	}
	var cleanups []func() error
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			err = errors.Join(err, cleanups[i]())
		}
		// RemoveAll would delete through a mount left in place (the kubelet's root is
		// bind-mounted on itself, pods' volumes below it).
		if uerr := mounts.UnmountUnder(dir); uerr != nil {
			err = errors.Join(err, fmt.Errorf("leaving %s in place: %w", dir, uerr))
		} else {
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}()

	// The kubelet writes a few host paths whatever it is told: hidden behind tmpfs mounts
	// of this mount namespace (the caller removes the directories created for them).
	if err := hostpaths.Mask(kubelet.HostPaths...); err != nil {
		return nil, err
	}

	needsRuntime := o.Agent == AgentKubelet || o.Provider == ProviderCRI
	repoList := filepath.Join(dir, "repo-list.yaml")
	if needsRuntime {
		reg, err := testimage.StartRegistry(ctx)
		if err != nil {
			return nil, err
		}
		cleanups = append(cleanups, func() error { reg.Close(); return nil })
		if err := pushImages(ctx, reg, DefaultImageSources(o.BinDir, o.KubernetesDir)); err != nil {
			return nil, err
		}
		if err := writeRepoList(repoList, reg.Host()); err != nil {
			return nil, err
		}
	}

	var cd *testcontainerd.Containerd
	if needsRuntime {
		cd, err = testcontainerd.Start(ctx, testcontainerd.Options{Bridge: &testcontainerd.Bridge{Subnet: NodePodCIDR}})
		if err != nil {
			return nil, fmt.Errorf("containerd with a bridge network: %w", err)
		}
		logger.Info("containerd started", "endpoint", cd.Endpoint(), "podCIDR", NodePodCIDR)
		cleanups = append(cleanups, func() error {
			_ = copyFile(cd.LogPath(), filepath.Join(o.Out, "containerd.log"))
			return cd.Stop()
		})
	}

	c, err := startCluster(ctx, o.TestBin, filepath.Join(o.BinDir, "kube-scheduler"), dir, o.Node)
	if err != nil {
		return nil, err
	}
	cleanups = append(cleanups, func() error { c.stop(o.Out); return nil })

	spec := agentSpec{dir: filepath.Join(dir, "agent"), node: o.Node, env: c.env, provider: o.Provider, verbose: o.Verbosity}
	if err := os.MkdirAll(spec.dir, 0o755); err != nil {
		return nil, err
	}
	if cd != nil {
		spec.endpoint = cd.Endpoint()
	}
	var agent runningAgent
	if o.Agent == AgentKubelet {
		spec.binary = filepath.Join(o.BinDir, "kubelet")
		agent, err = startKubelet(ctx, spec)
	} else {
		spec.binary = o.AgentBinary
		agent, err = startVKStatic(ctx, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", o.Agent, err)
	}
	cleanups = append(cleanups, func() error {
		stopErr := agent.Stop()
		_ = copyFile(agent.LogPath(), filepath.Join(o.Out, o.Agent+".log"))
		return stopErr
	})
	if err := c.waitNodeReady(ctx, o.Node, agent.Exited()); err != nil {
		return nil, err
	}
	logger.Info("Node ready; running the suite", "agent", o.Agent, "provider", o.Provider, "focus", o.Focus, "skip", o.Skip, "procs", o.Procs)

	start := time.Now()
	junit, err := runSuite(ctx, o, c, repoList, needsRuntime)
	elapsed := time.Since(start)
	if err != nil {
		return nil, err
	}
	specs, err := readJUnit(junit)
	if err != nil {
		return nil, err
	}
	r := &Result{
		Agent: o.Agent, Provider: o.Provider, Commit: o.Commit, Version: o.AgentVersion, Date: start.UTC().Format(time.RFC3339),
		Focus: o.Focus, Skip: o.Skip, Labels: o.LabelFilter, Procs: o.Procs, Seconds: elapsed.Round(time.Second).Seconds(),
		Counts: count(specs), Specs: specs,
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Out, "summary.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return r, nil
}

// pushImages builds the look-alike images and pushes them to the run's registry.
func pushImages(ctx context.Context, reg *testimage.Registry, src ImageSources) error {
	images, err := Images(ctx, src)
	if err != nil {
		return err
	}
	for repoTag, img := range images {
		if _, err := reg.Push(ctx, repoTag, img); err != nil {
			return err
		}
	}
	klog.FromContext(ctx).Info("Images pushed", "registry", reg.Host(), "count", len(images))
	return nil
}

// runSuite runs e2e.test under ginkgo with o.Procs parallel processes and returns the JUnit
// report's path. A suite with failed specs is not an error: the report says which.
func runSuite(ctx context.Context, o Options, c *cluster, repoList string, images bool) (string, error) {
	args := []string{filepath.Join(o.BinDir, "ginkgo"),
		"--procs", strconv.Itoa(o.Procs), "--timeout", o.Timeout.String(), "--no-color",
		"--focus", o.Focus,
	}
	if o.Skip != "" {
		args = append(args, "--skip", o.Skip)
	}
	if o.LabelFilter != "" {
		args = append(args, "--label-filter", o.LabelFilter)
	}
	args = append(args, filepath.Join(o.BinDir, "e2e.test"), "--",
		"--provider", "skeleton",
		"--kubeconfig", c.adminKubeconfig,
		"--kubectl-path", filepath.Join(o.TestBin, "kubectl"),
		"--report-dir", o.Out,
	)
	var env []string
	if images {
		env = append(env, "KUBE_TEST_REPO_LIST="+repoList)
	}
	junit := filepath.Join(o.Out, "junit_01.xml")
	for _, stale := range []string{junit, filepath.Join(o.Out, "e2e.log")} { // a previous run's
		_ = os.Remove(stale)
	}
	// Its process group is signalled, so that the e2e.test processes it started stop with it.
	p, err := childproc.Start(childproc.Options{Name: "ginkgo", LogPath: filepath.Join(o.Out, "e2e.log"), Tee: o.Output, Env: env, Group: true}, args...)
	if err != nil {
		return "", err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Stop(30 * time.Second)
		return "", fmt.Errorf("suite interrupted: %w", ctx.Err())
	}
	if _, err := os.Stat(junit); err != nil {
		return "", fmt.Errorf("ginkgo wrote no JUnit report (%v; log: %s): %w", p.Err(), filepath.Join(o.Out, "e2e.log"), err)
	}
	return junit, nil
}

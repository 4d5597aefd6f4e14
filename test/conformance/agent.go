package conformance

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/vk-static/vk-static/bench/kubelet"
	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/childproc"
	"github.com/vk-static/vk-static/test/support/netns"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// The agents under test.
const (
	AgentVKStatic = "vk-static"
	AgentKubelet  = "kubelet"
)

// The node's kubelet API port: the usual one (the run has a network namespace of its own).
const kubeletPort = 10250

// runningAgent is the agent under test as a process.
type runningAgent interface {
	// Exited is closed once the process has ended.
	Exited() <-chan struct{}
	// Stop ends it (SIGTERM, then SIGKILL after a grace period).
	Stop() error
	// LogPath is its log file.
	LogPath() string
}

// agentSpec is what either agent needs.
type agentSpec struct {
	dir      string // the agent's own directory under the run's
	node     string
	env      *testenv.Env
	endpoint string // the CRI endpoint; "" with the process provider
	provider string // vk-static's --provider
	binary   string // vk-static's or the kubelet's binary
	verbose  int
}

// startVKStatic runs vk-static with a node identity on the namespace's node IP, its kubelet
// API on the usual port there, and the provider (cri on the run's containerd, or process).
func startVKStatic(ctx context.Context, s agentSpec) (runningAgent, error) {
	args := []string{
		"--node-ip", netns.NodeIP.String(), "--address", netns.NodeIP.String(), "--port", strconv.Itoa(kubeletPort),
		"--provider", s.provider, "--max-pods", "110", "-v", strconv.Itoa(s.verbose),
		// The kubelet always admits privileged containers (it has no such flag any more);
		// vk-static refuses them unless told, and the specs run privileged pods.
		"--allow-privileged",
	}
	if s.endpoint != "" {
		args = append(args, "--container-runtime-endpoint", s.endpoint)
	} else {
		// The process provider's pods share the run's network namespace: there is no CNI
		// configuration for them (the CRI run's bridge is containerd's).
		args = append(args, "--process-allow-host-network")
	}
	a, err := agentproc.Start(agentproc.Config{Binary: s.binary, Dir: s.dir, Node: s.node, Env: s.env, Args: args})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		_ = a.Stop(10 * time.Second)
		return nil, err
	}
	return vkStatic{a}, nil
}

type vkStatic struct{ *agentproc.Agent }

func (v vkStatic) Stop() error     { return v.Agent.Stop(30 * time.Second) }
func (v vkStatic) LogPath() string { return v.Agent.LogPath }

// kubeletConfig is bench/kubelet's configuration of the kubelet for this kind of machine, with
// what a cluster's kubelets have besides: the cluster domain, no resolver configuration of the
// machine's handed to pods (resolvConf ""), and no image garbage collection (the look-alike
// images exist only in the run's registry and containerd).
func kubeletConfig(o kubelet.Options) ([]byte, error) {
	base, err := kubelet.Config(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	m["clusterDomain"] = "cluster.local"
	m["resolvConf"] = ""
	m["imageGCHighThresholdPercent"] = 100
	return yaml.Marshal(m)
}

// startKubelet runs the kubelet (the reference) as vk-static runs: same node, node IP, API
// port, containerd; its identity a client certificate of the cluster's CA.
func startKubelet(ctx context.Context, s agentSpec) (runningAgent, error) {
	o := kubelet.Options{
		Node: s.node, NodeIP: netns.NodeIP.String(), Address: netns.NodeIP.String(), Port: kubeletPort,
		HealthzAddr: "127.0.0.1", HealthzPort: 10248,
		ManifestDir: filepath.Join(s.dir, "manifests"), RootDir: filepath.Join(s.dir, "root"),
		Kubeconfig: filepath.Join(s.dir, "kubeconfig"), ClientCAFile: s.env.CAFile,
		RuntimeEndpoint: s.endpoint, MaxPods: 110, QPS: 50, Burst: 100, Verbosity: s.verbose,
	}
	for _, d := range []string{o.ManifestDir, o.RootDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	nodeCfg, err := s.env.NodeConfig(s.node)
	if err != nil {
		return nil, err
	}
	if err := testenv.WriteKubeconfig(o.Kubeconfig, nodeCfg); err != nil {
		return nil, err
	}
	cfg, err := kubeletConfig(o)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(o.ConfigPath(), cfg, 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(s.dir, "kubelet.log")
	p, err := childproc.Start(childproc.Options{Name: "kubelet", LogPath: logPath, Group: true}, kubelet.Args(s.binary, o)...)
	if err != nil {
		return nil, err
	}
	k := &kubeletProc{p: p, logPath: logPath}
	if err := waitHealthz(ctx, "http://127.0.0.1:10248/healthz", p.Done()); err != nil {
		p.Stop(10 * time.Second)
		return nil, fmt.Errorf("kubelet: %w (log: %s)", err, logPath)
	}
	return k, nil
}

type kubeletProc struct {
	p       *childproc.Process
	logPath string
}

func (k *kubeletProc) Exited() <-chan struct{} { return k.p.Done() }
func (k *kubeletProc) LogPath() string         { return k.logPath }
func (k *kubeletProc) Stop() error {
	k.p.Stop(30 * time.Second)
	return nil
}

// waitHealthz polls url until it answers 200, exited is closed, or two minutes pass.
func waitHealthz(ctx context.Context, url string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case <-exited:
			return fmt.Errorf("exited during start-up")
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
}

// copyFile copies src to dst (logs kept out of directories that are removed).
func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

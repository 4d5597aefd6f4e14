package agentproc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/test/support/testenv"
)

// Config describes one agent process.
type Config struct {
	Binary string // the vk-static binary
	Dir    string // holds manifests/, root/, kubeconfig and agent.log
	Node   string // --hostname-override
	// Env provides the node identity (a kubeconfig for Node); nil runs the agent standalone.
	Env *testenv.Env
	// APIHost, when set, replaces Env's API server URL in the agent's kubeconfig: a test's proxy
	// in front of the API server, serving a certificate of Env's CA.
	APIHost string
	// Args are appended to the defaults; a flag given twice takes the later value.
	Args []string
	// ReadyPath is what WaitReady polls on the healthz address; default /readyz. A peer of the
	// bench that is not vk-static may serve another (the kubelet: /healthz only).
	ReadyPath string
}

// Agent is a running (or stopped) vk-static process.
type Agent struct {
	Node        string
	Dir         string // Config.Dir
	ManifestDir string
	LogPath     string
	Healthz     string   // http://127.0.0.1:PORT
	APIPort     int      // --port, the kubelet API's (HTTPS on 127.0.0.1)
	Args        []string // the whole command line after the binary

	binary    string
	readyPath string
	// logOffset is where this run's lines begin in LogPath (a restart appends).
	logOffset int64
	cmd       *exec.Cmd
	exited    chan struct{}
	http      *http.Client
}

// Start starts the agent; WaitReady waits for it.
func Start(cfg Config) (*Agent, error) {
	a := &Agent{
		Node:        cfg.Node,
		Dir:         cfg.Dir,
		ManifestDir: filepath.Join(cfg.Dir, "manifests"),
		LogPath:     filepath.Join(cfg.Dir, "agent.log"),
		binary:      cfg.Binary,
		readyPath:   cfg.ReadyPath,
		http:        &http.Client{Timeout: 2 * time.Minute},
	}
	if a.readyPath == "" {
		a.readyPath = "/readyz"
	}
	if err := os.MkdirAll(a.ManifestDir, 0o755); err != nil {
		return nil, err
	}
	healthzPort, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	apiPort, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	a.Healthz = "http://127.0.0.1:" + strconv.Itoa(healthzPort)
	a.APIPort = apiPort
	a.Args = []string{
		"--hostname-override", cfg.Node,
		"--node-ip", "127.0.0.1", // loopback only: the machine's other addresses are off limits
		"--address", "127.0.0.1", "--port", strconv.Itoa(apiPort),
		"--healthz-bind-address", "127.0.0.1", "--healthz-port", strconv.Itoa(healthzPort),
		"--pod-manifest-path", a.ManifestDir,
		"--root-dir", filepath.Join(cfg.Dir, "root"),
		// Not the machine's /var/log/pods (and /var/log/containers beside it).
		"--pod-logs-dir", filepath.Join(cfg.Dir, "log", "pods"),
		// The simulator unless the test asks for another provider (Args): most tests are
		// about the agent, not about what runs the pods.
		"--provider", "mock",
	}
	if cfg.Env != nil {
		nodeCfg, err := cfg.Env.NodeConfig(cfg.Node)
		if err != nil {
			return nil, err
		}
		if cfg.APIHost != "" {
			nodeCfg.Host = cfg.APIHost
		}
		kubeconfig := filepath.Join(cfg.Dir, "kubeconfig")
		if err := testenv.WriteKubeconfig(kubeconfig, nodeCfg); err != nil {
			return nil, err
		}
		// The cluster CA signed the API server's kubelet client certificate: with it the agent
		// knows the API server when it proxies kubectl logs and exec.
		a.Args = append(a.Args, "--kubeconfig", kubeconfig, "--client-ca-file", cfg.Env.CAFile)
	}
	a.Args = append(a.Args, cfg.Args...)
	return a, a.start()
}

func (a *Agent) start() error {
	log, err := os.OpenFile(a.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) // a restart appends
	if err != nil {
		return err
	}
	if fi, err := log.Stat(); err == nil {
		a.logOffset = fi.Size()
	}
	a.cmd = exec.Command(a.binary, a.Args...)
	a.cmd.Stdout, a.cmd.Stderr = log, log
	// The agent dies with the test or benchmark even when that is killed before Stop.
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", a.binary, err)
	}
	a.exited = make(chan struct{})
	go func() {
		_ = a.cmd.Wait()
		log.Close()
		close(a.exited)
	}()
	return nil
}

// Exited is closed when the process has exited.
func (a *Agent) Exited() <-chan struct{} { return a.exited }

// Pid is the process ID.
func (a *Agent) Pid() int { return a.cmd.Process.Pid }

// WaitReady polls /readyz (Config.ReadyPath) until it answers 200, the process exits, or ctx is done.
func (a *Agent) WaitReady(ctx context.Context) error {
	for {
		select {
		case <-a.exited:
			return fmt.Errorf("agent %s exited during start-up (log: %s)", a.Node, a.LogPath)
		case <-ctx.Done():
			return fmt.Errorf("agent %s not ready: %w (log: %s)", a.Node, ctx.Err(), a.LogPath)
		case <-time.After(20 * time.Millisecond):
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.Healthz+a.readyPath, nil)
		if err != nil {
			return err
		}
		if resp, err := a.http.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then kills it. It returns
// an error when the agent had to be killed or exited with a non-zero code, or when the race
// detector reported a data race in its log.
func (a *Agent) Stop(grace time.Duration) error {
	if a.cmd == nil {
		return nil
	}
	defer func() { a.cmd = nil }()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(grace):
		_ = a.cmd.Process.Kill()
		<-a.exited
		return fmt.Errorf("agent %s did not stop within %s of SIGTERM", a.Node, grace)
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("agent %s exited with code %d (log: %s)", a.Node, code, a.LogPath)
	}
	if log, _ := os.ReadFile(a.LogPath); strings.Contains(string(log), "WARNING: DATA RACE") {
		return fmt.Errorf("agent %s: the race detector reported a data race (log: %s)", a.Node, a.LogPath)
	}
	return nil
}

// Kill kills the agent with SIGKILL, as a crash or the OOM killer would, and waits for it to
// exit; Restart starts it again. What the agent started and left running (the process
// provider's containers) keeps running.
func (a *Agent) Kill() {
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Kill()
	<-a.exited
	a.cmd = nil
}

// Restart stops the agent (if it runs) and starts it again with the same command line and
// directories.
func (a *Agent) Restart(ctx context.Context, grace time.Duration) error {
	if err := a.Stop(grace); err != nil {
		return err
	}
	if err := a.start(); err != nil {
		return err
	}
	return a.WaitReady(ctx)
}

// Metric sums the samples of one of the agent's metrics (counter, gauge, or a histogram's
// _count/_sum) whose labels include every pair in labels.
func (a *Agent) Metric(ctx context.Context, name string, labels map[string]string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.Healthz+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape agent metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("parse agent metrics: %w", err)
	}
	family, suffix := families[name], ""
	for _, s := range []string{"_count", "_sum"} {
		if family == nil && strings.HasSuffix(name, s) {
			family, suffix = families[strings.TrimSuffix(name, s)], s
		}
	}
	if family == nil {
		return 0, nil // not reported yet: a vector without samples
	}
	var sum float64
	for _, m := range family.GetMetric() {
		if matches(m, labels) {
			sum += sampleValue(m, suffix)
		}
	}
	return sum, nil
}

func matches(m *dto.Metric, labels map[string]string) bool {
	found := 0
	for _, lp := range m.GetLabel() {
		if want, ok := labels[lp.GetName()]; ok {
			if lp.GetValue() != want {
				return false
			}
			found++
		}
	}
	return found == len(labels)
}

func sampleValue(m *dto.Metric, suffix string) float64 {
	switch {
	case m.GetHistogram() != nil && suffix == "_count":
		return float64(m.GetHistogram().GetSampleCount())
	case m.GetHistogram() != nil:
		return m.GetHistogram().GetSampleSum()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// WriteManifest writes a manifest atomically (a dot-file, then rename), as config management
// tools do, so the agent never reads half a file.
func (a *Agent) WriteManifest(name string, content []byte) error {
	tmp := filepath.Join(a.ManifestDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(a.ManifestDir, name))
}

// WritePod writes pod as the manifest <name>.json (WriteManifest).
func (a *Agent) WritePod(pod *corev1.Pod) error {
	data, err := json.Marshal(pod)
	if err != nil {
		return err
	}
	return a.WriteManifest(pod.Name+".json", data)
}

// RemovePod removes the manifest WritePod wrote for pod name.
func (a *Agent) RemovePod(name string) error { return a.RemoveManifest(name + ".json") }

// MirrorName is the name of the mirror pod of this agent's static pod name.
func (a *Agent) MirrorName(name string) string { return name + "-" + a.Node }

// RemoveManifest deletes a manifest.
func (a *Agent) RemoveManifest(name string) error {
	return os.Remove(filepath.Join(a.ManifestDir, name))
}

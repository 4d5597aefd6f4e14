package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/internal/testenv"
)

// agentProcess is one vk-static process under test, with its own node name, manifest
// directory and ports.
type agentProcess struct {
	Node        string
	ManifestDir string
	Args        []string // the command line, for the report
	healthz     string
	logPath     string
	cmd         *exec.Cmd
	exited      chan struct{}
	http        *http.Client
}

// agentSpec is how a scenario wants the agent started.
type agentSpec struct {
	Node      string
	MaxPods   int
	ExtraArgs []string
}

// startAgent runs the agent binary with the node's identity and waits until it is ready and
// its Node is registered.
func (r *Runner) startAgent(ctx context.Context, spec agentSpec) (*agentProcess, error) {
	dir := filepath.Join(r.WorkDir, spec.Node)
	a := &agentProcess{
		Node:        spec.Node,
		ManifestDir: filepath.Join(dir, "manifests"),
		logPath:     filepath.Join(dir, "agent.log"),
		http:        &http.Client{Timeout: 2 * time.Minute},
	}
	if err := os.MkdirAll(a.ManifestDir, 0o755); err != nil {
		return nil, err
	}
	cfg, err := r.Env.NodeConfig(spec.Node)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(kubeconfig, cfg); err != nil {
		return nil, err
	}
	healthzPort, err := freePort()
	if err != nil {
		return nil, err
	}
	apiPort, err := freePort()
	if err != nil {
		return nil, err
	}
	a.healthz = "http://127.0.0.1:" + strconv.Itoa(healthzPort)
	a.Args = append([]string{
		"--kubeconfig", kubeconfig,
		"--hostname-override", spec.Node,
		"--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(apiPort),
		"--healthz-bind-address", "127.0.0.1", "--healthz-port", strconv.Itoa(healthzPort),
		"--pod-manifest-path", a.ManifestDir,
		"--root-dir", filepath.Join(dir, "root"),
		"--max-pods", strconv.Itoa(max(spec.MaxPods, 110)),
		"--kube-api-qps", strconv.FormatFloat(float64(r.agentQPS()), 'f', -1, 32),
		"--kube-api-burst", strconv.Itoa(r.agentBurst()),
		"--profiling",
		"-v", "1",
	}, spec.ExtraArgs...)

	logFile, err := os.Create(a.logPath)
	if err != nil {
		return nil, err
	}
	a.cmd = exec.Command(r.AgentBinary, a.Args...)
	a.cmd.Stdout, a.cmd.Stderr = logFile, logFile
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start agent: %w", err)
	}
	a.exited = make(chan struct{})
	go func() {
		_ = a.cmd.Wait()
		logFile.Close()
		close(a.exited)
	}()
	if err := a.waitReady(ctx, r); err != nil {
		a.stop()
		return nil, fmt.Errorf("%w (agent log: %s)", err, a.logPath)
	}
	return a, nil
}

// waitReady polls /readyz and then the Node's Ready condition, for at most a minute.
func (a *agentProcess) waitReady(ctx context.Context, r *Runner) error {
	return poll(ctx, time.Minute, 20*time.Millisecond, func() (bool, error) {
		select {
		case <-a.exited:
			return false, errors.New("agent exited during start-up")
		default:
		}
		resp, err := a.http.Get(a.healthz + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		n, err := r.Env.Admin.CoreV1().Nodes().Get(ctx, a.Node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

func (a *agentProcess) pid() int { return a.cmd.Process.Pid }

func (a *agentProcess) sample() (procSample, error) { return readProc(a.pid()) }

// stop sends SIGTERM and waits up to 30 s before killing.
func (a *agentProcess) stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.exited
	}
}

// metric sums the samples of one of the agent's own metrics whose labels contain every
// key=value pair given.
func (a *agentProcess) metric(ctx context.Context, name string, labels map[string]string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.healthz+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scrape agent metrics: %w", err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		n, l, v, ok := parseSample(line)
		if !ok || n != name {
			continue
		}
		match := true
		for k, want := range labels {
			match = match && l[k] == want
		}
		if match {
			sum += v
		}
	}
	return sum, sc.Err()
}

// profile fetches a CPU profile of the given length into path; it blocks for that long.
func (a *agentProcess) profile(ctx context.Context, seconds int, path string) error {
	return a.fetch(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", a.healthz, seconds), path)
}

// heapProfile fetches the in-use heap profile into path.
func (a *agentProcess) heapProfile(ctx context.Context, path string) error {
	return a.fetch(ctx, a.healthz+"/debug/pprof/heap", path)
}

func (a *agentProcess) fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeManifest writes a manifest atomically (a dot-file, then rename), as config management
// tools do, so the agent never reads half a file.
func (a *agentProcess) writeManifest(name string, content []byte) error {
	tmp := filepath.Join(a.ManifestDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(a.ManifestDir, name))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// poll calls f every interval until it reports done, fails, or timeout passes.
func poll(ctx context.Context, timeout, interval time.Duration, f func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		done, err := f()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %w", timeout, ctx.Err())
		case <-t.C:
		}
	}
}

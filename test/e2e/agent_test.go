package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/vk-static/vk-static/internal/testenv"
)

// agent is one vk-static process with its own node name, manifest directory and ports.
type agent struct {
	t           *testing.T
	Node        string
	ManifestDir string
	Client      kubernetes.Interface // the node's own identity
	healthz     string
	cmd         *exec.Cmd
	log         string
	args        []string
	exited      chan struct{}
}

type agentOptions struct {
	standalone bool
	extraArgs  []string
}

// startAgent runs vk-static for the test's own node (named after the test) and stops it when
// the test ends; on failure its log is printed.
func startAgent(t *testing.T, opts agentOptions) *agent {
	t.Helper()
	dir := t.TempDir()
	a := &agent{
		t:           t,
		Node:        nodeNameFor(t),
		ManifestDir: filepath.Join(dir, "manifests"),
		log:         filepath.Join(dir, "agent.log"),
	}
	if err := os.MkdirAll(a.ManifestDir, 0o755); err != nil {
		t.Fatal(err)
	}
	healthzPort, apiPort := freePort(t), freePort(t)
	a.healthz = "http://127.0.0.1:" + strconv.Itoa(healthzPort)
	args := []string{
		"--hostname-override", a.Node,
		"--node-ip", "127.0.0.1",
		"--address", "127.0.0.1", "--port", strconv.Itoa(apiPort),
		"--healthz-bind-address", "127.0.0.1", "--healthz-port", strconv.Itoa(healthzPort),
		"--pod-manifest-path", a.ManifestDir,
		"--file-check-frequency", "1h", // changes must be seen through fsnotify
		"--root-dir", filepath.Join(dir, "root"),
		"--node-status-update-frequency", "2s",
		"--node-lease-duration-seconds", "4",
		"--kube-api-qps", "-1",
		"-v", "4",
	}
	if !opts.standalone {
		kubeconfig := filepath.Join(dir, "kubeconfig")
		cfg, err := env.NodeConfig(a.Node)
		if err != nil {
			t.Fatal(err)
		}
		if err := testenv.WriteKubeconfig(kubeconfig, cfg); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--kubeconfig", kubeconfig)
		a.Client = env.NodeClient(t, a.Node)
	}
	args = append(args, opts.extraArgs...)
	a.args = args
	a.start(args)
	t.Cleanup(func() {
		a.Stop()
		if t.Failed() {
			if data, err := os.ReadFile(a.log); err == nil {
				t.Logf("agent log (%s):\n%s", a.Node, tail(string(data), 200))
			}
		}
	})
	a.waitHealthy()
	return a
}

func (a *agent) start(args []string) {
	a.t.Helper()
	logFile, err := os.OpenFile(a.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		a.t.Fatal(err)
	}
	a.cmd = exec.Command(agentBinary, args...)
	a.cmd.Stdout, a.cmd.Stderr = logFile, logFile
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	a.exited = make(chan struct{})
	go func() {
		_ = a.cmd.Wait()
		logFile.Close()
		close(a.exited)
	}()
}

// Stop sends SIGTERM and waits for a clean exit; a race report or non-zero exit fails the test.
func (a *agent) Stop() {
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.exited
		a.t.Errorf("agent %s did not stop within 20s of SIGTERM", a.Node)
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		a.t.Errorf("agent %s exited with code %d", a.Node, code)
	}
	if data, _ := os.ReadFile(a.log); strings.Contains(string(data), "WARNING: DATA RACE") {
		a.t.Errorf("agent %s: the race detector reported a data race (see its log)", a.Node)
	}
	a.cmd = nil
}

// restart stops the agent and starts it again with the same flags and directories.
func (a *agent) restart() {
	a.t.Helper()
	a.Stop()
	a.start(a.args)
	a.waitHealthy()
}

func (a *agent) waitHealthy() {
	a.t.Helper()
	eventually(a.t, 30*time.Second, "agent ready", func() error {
		select {
		case <-a.exited:
			return fmt.Errorf("agent exited")
		default:
		}
		resp, err := http.Get(a.healthz + "/readyz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz: %s", resp.Status)
		}
		return nil
	})
}

// metric returns the sum of the samples of a metric whose label set contains every label in
// labels (e.g. `call="CreatePod"`).
func (a *agent) metric(name string, labels ...string) float64 {
	a.t.Helper()
	resp, err := http.Get(a.healthz + "/metrics")
	if err != nil {
		a.t.Fatalf("scrape metrics: %v", err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if !ok {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// WriteManifest writes a manifest atomically (write + rename), as config management does.
func (a *agent) WriteManifest(name, content string) {
	a.t.Helper()
	tmp := filepath.Join(a.ManifestDir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(a.ManifestDir, name)); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agent) RemoveManifest(name string) {
	a.t.Helper()
	if err := os.Remove(filepath.Join(a.ManifestDir, name)); err != nil {
		a.t.Fatal(err)
	}
}

// eventually polls f until it succeeds or the deadline passes (no fixed sleeps).
func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func nodeNameFor(t *testing.T) string {
	name := strings.ToLower(t.Name())
	var b strings.Builder
	for _, r := range name {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	// A suffix keeps runs apart (go test -count=N): mirrors and Nodes outlive an agent.
	return strings.Trim(s, "-") + "-" + strconv.Itoa(int(nodeSeq.Add(1)))
}

var nodeSeq atomic.Int32

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func tail(s string, lines int) string {
	all := strings.Split(s, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

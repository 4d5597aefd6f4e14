package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vk-static/vk-static/node/api/localadmin"
	"github.com/vk-static/vk-static/test/support/agentproc"
)

// agentProcess is one vk-static process under test, with its own node name, manifest
// directory and ports.
type agentProcess struct {
	*agentproc.Agent
	http *http.Client
	// mem holds the largest RssAnon and RssFile seen while the agent ran (sampleMem).
	mem memPeaks
}

// agentSpec is how a scenario wants the agent started.
type agentSpec struct {
	Binary    string
	Node      string
	MaxPods   int
	ExtraArgs []string
	ReadyPath string // default /readyz
}

// startAgent runs the agent binary with the node's identity and waits until it is ready and
// its Node is registered.
func (r *Runner) startAgent(ctx context.Context, spec agentSpec) (*agentProcess, error) {
	args := []string{
		"--max-pods", strconv.Itoa(max(spec.MaxPods, 110)),
		"--kube-api-qps", strconv.FormatFloat(float64(r.agentQPS()), 'f', -1, 32),
		"--kube-api-burst", strconv.Itoa(r.agentBurst()),
		"--profiling",
		"-v", "1",
	}
	if r.NodeIP != "" {
		// In place of agentproc's loopback defaults (a flag given twice takes the later value).
		args = append(args, "--node-ip", r.NodeIP, "--address", r.NodeIP)
	}
	p, err := agentproc.Start(agentproc.Config{
		Binary:    spec.Binary,
		Dir:       filepath.Join(r.WorkDir, spec.Node),
		Node:      spec.Node,
		Env:       r.Env,
		Args:      append(args, spec.ExtraArgs...),
		ReadyPath: spec.ReadyPath,
	})
	if err != nil {
		return nil, err
	}
	a := &agentProcess{Agent: p, http: &http.Client{Timeout: 2 * time.Minute}}
	go sampleMem(a.pid(), &a.mem, a.Exited())
	if err := a.waitReady(ctx, r); err != nil {
		a.stop()
		return nil, fmt.Errorf("%w (agent log: %s)", err, a.LogPath)
	}
	return a, nil
}

// waitReady waits for /readyz (or the peer's ReadyPath) and then the Node's Ready condition, for at most a minute.
func (a *agentProcess) waitReady(ctx context.Context, r *Runner) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		return err
	}
	return poll(ctx, time.Minute, 20*time.Millisecond, func() (bool, error) {
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

func (a *agentProcess) pid() int { return a.Pid() }

func (a *agentProcess) sample() (procSample, error) { return readProc(a.pid()) }

// exitedEarly is an error when the agent has already exited, before the harness stopped it:
// a crash, whose run measured an agent that was not there for all of it.
func (a *agentProcess) exitedEarly() error {
	select {
	case <-a.Exited():
		return fmt.Errorf("agent %s exited before the harness stopped it (log: %s)", a.Node, a.LogPath)
	default:
		return nil
	}
}

// stop sends SIGTERM and waits up to 30 s before killing; how it ended is logged, not judged.
func (a *agentProcess) stop() {
	if err := a.Stop(30 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
}

// metric sums the samples of one of the agent's own metrics whose labels contain every
// key=value pair given.
func (a *agentProcess) metric(ctx context.Context, name string, labels map[string]string) (float64, error) {
	return a.Metric(ctx, name, labels)
}

// profile fetches a CPU profile of the given length into path; it blocks for that long.
func (a *agentProcess) profile(ctx context.Context, seconds int, path string) error {
	return a.fetchProfile(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds), path)
}

// heapProfile fetches the in-use heap profile into path.
func (a *agentProcess) heapProfile(ctx context.Context, path string) error {
	return a.fetchProfile(ctx, "/debug/pprof/heap", path)
}

// fetchProfile fetches pprofPath (/debug/pprof/…, with its query) into path. vk-static serves
// pprof on its kubelet API only, behind its authentication, as the kubelet does: the harness
// reads it there as the agent's local administrator (the credential in <root-dir>/pki). The
// floor peers, and a -baseline built before that, serve it on the healthz port instead: that
// is asked when there is no credential, or the API has no /debug/pprof.
func (a *agentProcess) fetchProfile(ctx context.Context, pprofPath, path string) error {
	if cred, err := localadmin.ReadCredential(filepath.Join(a.Dir, "root", "pki")); err == nil {
		tr := &http.Transport{TLSClientConfig: cred.TLSConfig()}
		defer tr.CloseIdleConnections()
		err := fetch(ctx, &http.Client{Transport: tr, Timeout: a.http.Timeout}, cred.Server+pprofPath, path)
		var status statusError
		if !errors.As(err, &status) || status.code != http.StatusNotFound {
			return err
		}
	}
	return fetch(ctx, a.http, a.Healthz+pprofPath, path)
}

// statusError is an answer other than 200.
type statusError struct {
	url    string
	code   int
	status string
}

func (e statusError) Error() string { return fmt.Sprintf("GET %s: %s", e.url, e.status) }

// fetch writes what GET url answers into path.
func fetch(ctx context.Context, c *http.Client, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError{url: url, code: resp.StatusCode, status: resp.Status}
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

func (a *agentProcess) writeManifest(name string, content []byte) error {
	return a.WriteManifest(name, content)
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

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	criclient "k8s.io/cri-client/pkg"

	"github.com/vk-static/vk-static/bench/criproxy"
	"github.com/vk-static/vk-static/test/support/testcontainerd"
	"github.com/vk-static/vk-static/test/support/testimage"
)

// criQuiet is cri-50's quiet window, as process-100's.
const criQuiet = processQuiet

// criGoneTimeout is how long after the last mirror pod is gone cri-50 waits for containerd to
// hold nothing of its pods: the kubelet stops their containers at once but removes the pod
// sandboxes only in its container garbage collection, once a minute.
const criGoneTimeout = 2 * time.Minute

// criImage is cri-50's one image, imported into the scenario's containerd (not pulled: the
// measurement is of running pods, not of a registry).
const criImage = "localhost/vkbench/sleep:1"

// CRIResult is what the CRI provider's pods cost: the agent beside the container runtime
// that runs them (containerd and one shim per pod sandbox), all from /proc.
type CRIResult struct {
	// During start-up (manifests written → every mirror Running): containerd's CPU, and the
	// shims' (all of theirs: they started in that phase).
	StartContainerdCPUSeconds float64 `json:"startContainerdCPUSeconds"`
	StartShimCPUSeconds       float64 `json:"startShimCPUSeconds"`
	// In the quiet window, % of one core each (the agent's is Result.Idle.CPUPercent).
	QuietContainerdCPUPercent float64 `json:"quietContainerdCPUPercent"`
	QuietShimCPUPercent       float64 `json:"quietShimCPUPercent"` // all shims together
	// Resident sets at the quiet window's end (VmRSS; the shims' Pss divides the pages they
	// share, their binary's, among them).
	AgentRSSMB      float64 `json:"agentRSSMB"`
	ContainerdRSSMB float64 `json:"containerdRSSMB"`
	Shims           int     `json:"shims"`
	ShimRSSSumMB    float64 `json:"shimRSSSumMB"`
	ShimPssSumMB    float64 `json:"shimPssSumMB"`
	// ShimsGoneSeconds: first manifest removed → no shim left (every sandbox stopped).
	// ContainersGoneSeconds: first manifest removed → containerd lists no container and no
	// sandbox, and no shim is left. Leftovers say what was still there when the harness
	// stopped waiting.
	ShimsGoneSeconds      float64 `json:"shimsGoneSeconds,omitempty"`
	ContainersGoneSeconds float64 `json:"containersGoneSeconds,omitempty"`
	Leftovers             string  `json:"leftovers,omitempty"`
	// StartCalls are the agent's CRI calls by method from the first manifest written until the
	// agent's API requests settled after every mirror was Running; RemoveCalls from the first
	// manifest removed until containerd was empty. Both as the timing proxy between the agent
	// and containerd saw them (bench/criproxy), the same for every peer.
	StartCalls  map[string]CRICall `json:"startCalls,omitempty"`
	RemoveCalls map[string]CRICall `json:"removeCalls,omitempty"`
}

// criManifest is a static host-network pod of one container from criImage, running the
// image's own command (sleep until stopped).
func criManifest(name, ns string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 5
  containers:
  - name: c
    image: %s
`, name, ns, criImage)
}

// runCRIPods runs n static pods from one image on the CRI provider (or the kubelet, a peer),
// on a throwaway containerd of the run's own (test/support/testcontainerd): every mirror Running,
// a quiet window in which the agent, containerd and the shims are measured, then the
// manifests removed and every container, sandbox and shim gone.
func runCRIPods(ctx context.Context, s *session, n int, quiet time.Duration) (_ *Result, err error) {
	// With the loopback CNI network for every peer alike: the kubelet waits for NetworkReady;
	// host-network pods never call the plugin.
	cd, err := testcontainerd.Start(ctx, testcontainerd.Options{LoopbackCNI: true})
	if err != nil {
		return nil, err
	}
	defer func() {
		// The agent still runs (the session stops it, after reading its peak RSS): it loses
		// its runtime, with no pod left to run there.
		if stopErr := cd.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stop containerd: %w", stopErr))
		}
	}()
	// Every agent reaches containerd through the same timing proxy (bench/criproxy).
	proxy, err := criproxy.Start(filepath.Join(s.r.WorkDir, s.node+"-cri.sock"), cd.Endpoint())
	if err != nil {
		return nil, err
	}
	defer func() {
		if closeErr := proxy.Close(); closeErr != nil {
			err = errors.Join(err, fmt.Errorf("stop the CRI proxy: %w", closeErr))
		}
	}()
	img, err := testimage.Build(testimage.Options{Cmd: []string{"sleep"}})
	if err != nil {
		return nil, err
	}
	if err := testimage.Import(ctx, cd, criImage, img); err != nil {
		return nil, err
	}
	ready, err := s.startAgent(ctx, n+100, "--provider", "cri", "--container-runtime-endpoint", proxy.Endpoint())
	if err != nil {
		return nil, err
	}
	res := &Result{Pods: n, AgentReadySeconds: ready.Seconds(), CRI: &CRIResult{}}
	cr := res.CRI
	cdStart, err := readProc(cd.PID())
	if err != nil {
		return nil, err
	}
	proxy.Reset()
	files, err := s.startStaticPods(ctx, res, n, func(name string) []byte { return criManifest(name, s.ns) })
	cr.StartCalls = criCalls(proxy.Calls())
	if err != nil {
		return res, err
	}
	cdQuiet, err := readProc(cd.PID())
	if err != nil {
		return nil, err
	}
	shimsQuiet := runtimeProcs(cd)
	cr.StartContainerdCPUSeconds = cdQuiet.CPUSeconds - cdStart.CPUSeconds
	for _, p := range shimsQuiet {
		cr.StartShimCPUSeconds += p.CPUSeconds
	}
	if res.Idle, err = s.measureIdle(ctx, res, quiet); err != nil {
		return nil, err
	}
	if err := measureRuntime(s, cd, cr, cdQuiet, shimsQuiet, res.Idle.Seconds); err != nil {
		return nil, err
	}
	s.r.logf("%s: quiet: agent %.2f%% of a core, RSS %.1f MB; containerd %.2f%%, RSS %.1f MB; %d shims %.2f%% in all, RSS %.1f MB in all (Pss %.1f MB)",
		s.name, res.Idle.CPUPercent, cr.AgentRSSMB, cr.QuietContainerdCPUPercent, cr.ContainerdRSSMB,
		cr.Shims, cr.QuietShimCPUPercent, cr.ShimRSSSumMB, cr.ShimPssSumMB)

	proxy.Reset()
	delStart, err := s.removeStaticPods(ctx, res, files)
	if err != nil {
		return nil, err
	}
	left := ""
	err = poll(ctx, criGoneTimeout, 200*time.Millisecond, func() (bool, error) {
		if cr.ShimsGoneSeconds == 0 && len(runtimeProcs(cd)) == 0 {
			cr.ShimsGoneSeconds = time.Since(delStart).Seconds()
		}
		left = runtimeLeftovers(ctx, cd)
		return left == "", nil
	})
	cr.RemoveCalls = criCalls(proxy.Calls())
	if err != nil {
		cr.Leftovers = left
		res.Error = fmt.Sprintf("left in containerd %s after every mirror pod was gone: %s", criGoneTimeout, left)
		return res, errors.New(res.Error)
	}
	cr.ContainersGoneSeconds = time.Since(delStart).Seconds()
	s.r.logf("%s: every shim gone %.2fs, every container and sandbox %.2fs after the first manifest was removed", s.name, cr.ShimsGoneSeconds, cr.ContainersGoneSeconds)
	return res, nil
}

// measureRuntime fills cr's quiet-window figures: the window was window seconds long and
// began when containerd and the shims were sampled as cdBefore and shimsBefore.
func measureRuntime(s *session, cd *testcontainerd.Containerd, cr *CRIResult, cdBefore procSample, shimsBefore map[int]procSample, window float64) error {
	a, err := s.agent.sample()
	if err != nil {
		return err
	}
	c, err := readProc(cd.PID())
	if err != nil {
		return err
	}
	cr.AgentRSSMB, cr.ContainerdRSSMB = mb(a.RSSBytes), mb(c.RSSBytes)
	cr.QuietContainerdCPUPercent = (c.CPUSeconds - cdBefore.CPUSeconds) / window * 100
	for pid, p := range runtimeProcs(cd) {
		cr.Shims++
		cr.ShimRSSSumMB += mb(p.RSSBytes)
		if pss, err := readPss(pid); err == nil {
			cr.ShimPssSumMB += mb(pss)
		}
		if before, ok := shimsBefore[pid]; ok {
			cr.QuietShimCPUPercent += (p.CPUSeconds - before.CPUSeconds) / window * 100
		}
	}
	return nil
}

// runtimeProcs samples the running shims of cd (containerd-shim-runc-v2, one per sandbox), by
// pid.
func runtimeProcs(cd *testcontainerd.Containerd) map[int]procSample {
	out := map[int]procSample{}
	pids, _ := cd.Shims()
	for _, pid := range pids {
		if p, err := readProc(pid); err == nil {
			out[pid] = p
		}
	}
	return out
}

// runtimeLeftovers says what containerd still has of the scenario's pods: sandboxes,
// containers, shims; "" when nothing.
func runtimeLeftovers(ctx context.Context, cd *testcontainerd.Containerd) string {
	rs, err := criclient.NewRemoteRuntimeService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
	if err != nil {
		return err.Error()
	}
	defer rs.Close(ctx)
	sandboxes, err := rs.ListPodSandbox(ctx, nil)
	if err != nil {
		return err.Error()
	}
	containers, err := rs.ListContainers(ctx, nil)
	if err != nil {
		return err.Error()
	}
	shims := len(runtimeProcs(cd))
	if len(sandboxes)+len(containers)+shims == 0 {
		return ""
	}
	return fmt.Sprintf("%d sandboxes, %d containers, %d shims", len(sandboxes), len(containers), shims)
}

// writeCRI prints cri-50's figures under WriteTable's table (nothing for other scenarios).
func writeCRI(w io.Writer, r *Result) {
	c := r.CRI
	if c == nil {
		return
	}
	var idle float64
	if r.Idle != nil {
		idle = r.Idle.CPUPercent
	}
	fmt.Fprintf(w, "\n%s: start-up CPU: agent %.2f s, containerd %.2f s, shims %.2f s in all\n",
		r.Scenario, r.StartCPUSeconds, c.StartContainerdCPUSeconds, c.StartShimCPUSeconds)
	fmt.Fprintf(w, "%s: quiet window, %% of a core: agent %.2f, containerd %.2f, %d shims %.2f in all; RSS MB: agent %.1f, containerd %.1f, shims %.1f in all (Pss %.1f)\n",
		r.Scenario, idle, c.QuietContainerdCPUPercent, c.Shims, c.QuietShimCPUPercent, c.AgentRSSMB, c.ContainerdRSSMB, c.ShimRSSSumMB, c.ShimPssSumMB)
	writeCRICalls(w, r.Scenario, c.StartCalls)
	if c.Leftovers != "" {
		fmt.Fprintf(w, "%s: LEFT in containerd after removal: %s\n", r.Scenario, c.Leftovers)
	} else {
		fmt.Fprintf(w, "%s: every shim gone %.2f s, every container and sandbox %.2f s after the first manifest was removed\n", r.Scenario, c.ShimsGoneSeconds, c.ContainersGoneSeconds)
	}
}

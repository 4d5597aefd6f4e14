package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/vk-static/vk-static/test/support/agentproc"
	"github.com/vk-static/vk-static/test/support/testenv"
)

// Defaults for Runner.
const (
	// DefaultParallel is how many requests the load driver keeps in flight, as in the peer
	// measurements of issue 6.
	DefaultParallel = 32
	// DefaultAgentQPS of -1 turns the agent's client-side rate limiter off, so the numbers
	// show what the agent and the API server can do, not a token bucket.
	DefaultAgentQPS   = -1
	DefaultAgentBurst = 1000
)

// Runner runs scenarios against one control plane, one fresh agent process and namespace per
// scenario.
type Runner struct {
	Env         *testenv.Env
	AgentBinary string
	// WorkDir holds each agent's kubeconfig, manifest directory, state and log.
	WorkDir string
	// ProfileDir, when set, receives a CPU profile of the agent during each scenario's busy
	// phase and a heap profile at its peak.
	ProfileDir string
	AgentQPS   float32 // 0 means DefaultAgentQPS
	AgentBurst int     // 0 means DefaultAgentBurst
	Parallel   int     // 0 means DefaultParallel
	// AgentArgs are appended to every agent's command line (e.g. --pod-sync-workers=32), to
	// measure a setting without rebuilding.
	AgentArgs []string
	// Idle is idle-1k's measuring window; 0 means 60 s.
	Idle time.Duration
	// NodeIP, when set, is every agent's --node-ip and --address instead of 127.0.0.1: an
	// address on lo of the network namespace the run is in (test/support/netns), for the kubelet,
	// which refuses a loopback node IP.
	NodeIP string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

func (r *Runner) agentQPS() float32 {
	if r.AgentQPS == 0 {
		return DefaultAgentQPS
	}
	return r.AgentQPS
}

func (r *Runner) agentBurst() int {
	if r.AgentBurst == 0 {
		return DefaultAgentBurst
	}
	return r.AgentBurst
}

func (r *Runner) parallel() int {
	if r.Parallel <= 0 {
		return DefaultParallel
	}
	return r.Parallel
}

func (r *Runner) logf(format string, args ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
	}
}

// Run runs one scenario in a namespace and with an agent of its own, and cleans both up.
func (r *Runner) Run(ctx context.Context, sc Scenario) (*Result, error) {
	return r.RunAs(ctx, sc, Peer{Name: PeerVKStatic, Binary: r.AgentBinary})
}

// RunAs is Run with peer's agent in place of the one under test; the result names the peer.
func (r *Runner) RunAs(ctx context.Context, sc Scenario, peer Peer) (*Result, error) {
	s, err := r.newSession(ctx, sc.Name)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.peer = peer
	r.logf("%s: start (%s, node %s)", sc.Name, peer.Name, s.node)
	res, err := sc.run(ctx, s)
	if res == nil {
		// Nothing measured: the run is still recorded, as failed, so that the tables and the
		// JSON say which run it was.
		res = &Result{}
		if err == nil {
			err = errors.New("the scenario returned no result")
		}
	}
	res.Scenario = sc.Name
	if peer.Name != PeerVKStatic {
		res.Peer = peer.Name
	}
	if s.agent != nil {
		res.AgentArgs = redactArgs(s.agent.Args)
		if p, err := s.agent.sample(); err == nil {
			s.agent.mem.add(p)
			res.PeakRSSMB = float64(p.PeakRSS) / (1 << 20)
		}
		anon, file := s.agent.mem.get()
		res.PeakAnonMB, res.PeakFileMB = float64(anon)/(1<<20), float64(file)/(1<<20)
		// Before the agent is stopped (which ends it): had it already ended, it crashed.
		err = errors.Join(err, s.agent.exitedEarly())
		// Stopped here rather than when the session closes, so that container processes left
		// behind fail this run.
		err = errors.Join(err, s.stopAgent())
	}
	res.Goals = goalsFor(res)
	// The scenario may have measured what it could and then failed, or finished with pods that
	// never ran: its numbers are kept, marked failed, and the failure is returned beside them.
	markFailed(res, err)
	if res.Failed() {
		return res, fmt.Errorf("%s: %w", sc.Name, runFailure{reason: res.Error, cause: err})
	}
	r.logf("%s: done", sc.Name)
	return res, nil
}

// session is one scenario's namespace, load-driver client, pod watcher and agent.
type session struct {
	r         *Runner
	name      string
	ns        string
	node      string
	client    kubernetes.Interface // the load driver: admin, unthrottled, requests counted
	transport *requestCounter
	watcher   *podWatcher
	agent     *agentProcess
	// agentStopped: stopAgent has run (the agent is stopped, its containers' leftovers killed).
	agentStopped bool
	peer         Peer // the agent to start
	// workloads are the container workloads a scenario saw running: the clean-up kills them
	// even when their containers, and the records of them, are gone.
	workloads []agentproc.Workload
	// scrapeCPU is the control plane's CPU spent answering the harness's own scrapes of the
	// API server's /metrics (scrapeAPIServer), each several MB of text: a phase's control-plane
	// CPU leaves it out, as it grows with how long settle polls, not with what the agent wrote.
	scrapeCPU float64
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

func (r *Runner) newSession(ctx context.Context, name string) (*session, error) {
	suffix := randomSuffix()
	s := &session{r: r, name: name, ns: "vkbench-" + name + "-" + suffix, node: "vkbench-" + name + "-" + suffix, watcher: newPodWatcher()}
	cfg := rest.CopyConfig(r.Env.AdminConfig)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "vkbench-driver"
	s.transport = newRequestCounter()
	cfg.WrapTransport = s.transport.wrap
	var err error
	if s.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	// No controller-manager creates it; pod admission needs it.
	_, err = s.client.CoreV1().ServiceAccounts(s.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create service account: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	started := make(chan struct{})
	errc := make(chan error, 1)
	s.wg.Go(func() { errc <- s.watcher.run(wctx, s.client, s.ns, started) })
	select {
	case <-started:
	case err := <-errc:
		cancel()
		return nil, err
	}
	return s, nil
}

func (s *session) startAgent(ctx context.Context, maxPods int, extra ...string) (time.Duration, error) {
	start := time.Now()
	spec := agentSpec{Binary: s.peer.Binary, Node: s.node, MaxPods: maxPods, ExtraArgs: append(extra, s.r.AgentArgs...), ReadyPath: s.peer.ReadyPath}
	if s.peer.Binary == "" {
		spec.Binary = s.r.AgentBinary
	}
	if !s.peer.isVKStatic() {
		// vk-static's settings mean nothing to a peer; the scenario's (the runtime endpoint)
		// do.
		spec.ExtraArgs = append(slices.Clip(extra), s.peer.Args...)
	}
	a, err := s.r.startAgent(ctx, spec)
	if err != nil {
		return 0, err
	}
	s.agent = a
	return time.Since(start), nil
}

// stopAgent stops the session's agent and kills what its containers left (killContainers),
// once; what it had to kill is the error.
func (s *session) stopAgent() error {
	if s.agent == nil || s.agentStopped {
		return nil
	}
	s.agentStopped = true
	s.agent.stop()
	return s.killContainers()
}

func (s *session) close() {
	_ = s.stopAgent() // RunAs stopped it already, and judged what was left
	s.cancel()
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = s.client.CoreV1().Namespaces().Delete(ctx, s.ns, metav1.DeleteOptions{})
	_ = s.client.CoreV1().Nodes().Delete(ctx, s.node, metav1.DeleteOptions{})
}

// apiWindow measures the agent's API requests between begin and end.
type apiWindow struct {
	server apiCounters
	driver requestCounts
}

func (s *session) beginAPI(ctx context.Context) (apiWindow, error) {
	c, err := s.scrapeAPIServer(ctx)
	return apiWindow{server: c, driver: s.transport.snapshot()}, err
}

// endAPI returns the agent's use of the API server in the window (server counters minus the
// driver's own requests; see agentUse).
func (s *session) endAPI(ctx context.Context, w apiWindow) (apiUse, error) {
	c, err := s.scrapeAPIServer(ctx)
	if err != nil {
		return apiUse{}, err
	}
	return agentUse(w.server, c, s.transport.snapshot().sub(w.driver)), nil
}

// scrapeAPIServer scrapes the API server's counters, adding what answering took the control
// plane to scrapeCPU (everything else the control plane did meanwhile too: a scrape takes tens
// of milliseconds).
func (s *session) scrapeAPIServer(ctx context.Context) (apiCounters, error) {
	before, errBefore := s.controlPlaneCPU()
	c, err := scrapeAPIServer(ctx, s.r.Env.Admin)
	if after, errAfter := s.controlPlaneCPU(); errBefore == nil && errAfter == nil {
		s.scrapeCPU += after - before
	}
	return c, err
}

// settle waits until the agent's request count stops moving for quiet (it may still be
// writing events or statuses after the last pod turned Running), at most limit. It counts
// every request but the driver's and the API server's housekeeping, not only node identities':
// KWOK runs with another identity.
func (s *session) settle(ctx context.Context, quiet, limit time.Duration) {
	last, since := -1.0, time.Now()
	_ = poll(ctx, limit, 250*time.Millisecond, func() (bool, error) {
		c, err := s.scrapeAPIServer(ctx)
		if err != nil {
			return false, nil
		}
		n := c.Requests.sub(s.transport.snapshot()).withoutServerBackground().total()
		if n != last {
			last, since = n, time.Now()
			return false, nil
		}
		return time.Since(since) >= quiet, nil
	})
}

// startProfile takes CPU profiles of the agent and the API server in the background; wait
// returns the paths of those taken.
func (s *session) startProfile(ctx context.Context, phase string, seconds int) (wait func() []string) {
	if s.r.ProfileDir == "" || s.agent == nil {
		return func() []string { return nil }
	}
	agentPath := filepath.Join(s.r.ProfileDir, fmt.Sprintf("%s-%s.cpu.pprof", s.profileName(), phase))
	// The API server's too, over the same window: what the agent's requests cost the server
	// every agent shares (the control plane's CPU in the result says how much; this, where).
	apiServerPath := filepath.Join(s.r.ProfileDir, fmt.Sprintf("%s-%s.apiserver.cpu.pprof", s.profileName(), phase))
	agentDone, apiServerDone := make(chan error, 1), make(chan error, 1)
	go func() { agentDone <- s.agent.profile(ctx, seconds, agentPath) }()
	go func() { apiServerDone <- s.apiServerProfile(ctx, seconds, apiServerPath) }()
	return func() []string {
		var paths []string
		for _, p := range []struct {
			what, path string
			done       chan error
		}{{"CPU profile", agentPath, agentDone}, {"API server CPU profile", apiServerPath, apiServerDone}} {
			if err := <-p.done; err != nil {
				s.r.logf("%s: %s: %v", s.name, p.what, err)
				continue
			}
			paths = append(paths, p.path)
		}
		return paths
	}
}

// apiServerProfile fetches a CPU profile of the API server (its /debug/pprof, as the admin)
// into path.
func (s *session) apiServerProfile(ctx context.Context, seconds int, path string) error {
	b, err := s.r.Env.Admin.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+60) * time.Second).DoRaw(ctx)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func (s *session) heapProfile(ctx context.Context) string {
	if s.r.ProfileDir == "" || s.agent == nil {
		return ""
	}
	path := filepath.Join(s.r.ProfileDir, s.profileName()+".heap.pprof")
	if err := s.agent.heapProfile(ctx, path); err != nil {
		s.r.logf("%s: heap profile: %v", s.name, err)
		return ""
	}
	return path
}

// profileName names this run's profiles: the agent (vk-static or the peer), the scenario and
// the node's random suffix, so that the rounds and peers of one result file each keep their
// own (Result.Profiles lists a run's).
func (s *session) profileName() string {
	return s.peer.Name + "-" + strings.TrimPrefix(s.node, "vkbench-")
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redactArgs drops the kubeconfig, CA, binary, socket and directory paths and the ports,
// which differ on every run.
func redactArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--kubeconfig", "--pod-manifest-path", "--root-dir", "--pod-logs-dir", "--port", "--healthz-port", "--hostname-override", "--client-ca-file", "--admin-kubeconfig", "--kwok",
			"--kubelet", "--container-runtime-endpoint":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// providerCalls reads the agent's provider-call duration histograms for the calls named.
func (s *session) providerCalls(ctx context.Context, calls ...string) map[string]QueueStat {
	out := map[string]QueueStat{}
	for _, c := range calls {
		labels := map[string]string{"call": c}
		n, err1 := s.agent.metric(ctx, "vk_static_provider_call_duration_seconds_count", labels)
		sum, err2 := s.agent.metric(ctx, "vk_static_provider_call_duration_seconds_sum", labels)
		if err1 != nil || err2 != nil || n == 0 {
			continue
		}
		out[c] = QueueStat{Items: n, MeanMs: sum / n * 1000}
	}
	return out
}

// queueStats reads the agent's pod-sync duration histograms by queue.
func (s *session) queueStats(ctx context.Context) map[string]QueueStat {
	out := map[string]QueueStat{}
	for _, q := range []string{"sync", "status"} {
		labels := map[string]string{"queue": q}
		n, err1 := s.agent.metric(ctx, "vk_static_pod_sync_duration_seconds_count", labels)
		sum, err2 := s.agent.metric(ctx, "vk_static_pod_sync_duration_seconds_sum", labels)
		if err1 != nil || err2 != nil || n == 0 {
			continue
		}
		out[q] = QueueStat{Items: n, MeanMs: sum / n * 1000}
	}
	return out
}

package bench

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// latencyTimeout bounds one logs or exec round trip; a slower one fails the scenario.
const latencyTimeout = 30 * time.Second

// rssSampleInterval is how often the latency phase samples the agent's resident set.
const rssSampleInterval = 100 * time.Millisecond

// runAPILatency starts n API pods as api-1k does, then makes rounds sequential round trips of
// each kind through the API server to the agent's kubelet API — pod logs (what `kubectl logs`
// sends) and `echo ok` through exec (what `kubectl exec` does: WebSocket, SPDY as fallback) —
// one pod after another, measuring their latency and the agent's CPU and resident set meanwhile,
// then deletes the pods. A failed round trip stops the phase: the result keeps what was
// measured and says why in Error.
func runAPILatency(ctx context.Context, s *session, n, rounds int, timeout time.Duration) (*Result, error) {
	res, names, err := startAPIPods(ctx, s, n, timeout)
	if err != nil {
		return nil, err
	}
	lat, measureErr := s.measureAPILatency(ctx, res, names, rounds)
	res.APILatency = lat
	if measureErr != nil {
		res.Error = measureErr.Error()
	}
	if err := deleteAPIPods(ctx, s, res, names, timeout); err != nil {
		return nil, err
	}
	return res, measureErr
}

// measureAPILatency is the latency phase of runAPILatency. A CPU profile of it, if taken, is
// added to res.Profiles.
func (s *session) measureAPILatency(ctx context.Context, res *Result, names []string, rounds int) (*APILatencyResult, error) {
	s.r.logf("%s: %d logs and %d exec round trips through the API server", s.name, rounds, rounds)
	execCfg := rest.CopyConfig(s.r.Env.AdminConfig)
	execCfg.QPS, execCfg.Burst = -1, 0
	execCfg.UserAgent = "vkbench-driver"

	before, err := s.agent.sample()
	if err != nil {
		return nil, err
	}
	waitProfile := s.startProfile(ctx, "latency", profileSeconds(len(names)))
	rss := s.sampleRSS(ctx)
	t0 := time.Now()
	var logs, execs []time.Duration
	var fallbacks atomic.Int64
	var phaseErr error
	for i := range rounds {
		pod := names[spreadIndex(i, len(names))]
		d, err := s.logsRoundTrip(ctx, pod)
		if err != nil {
			phaseErr = fmt.Errorf("logs of %s (round %d): %w", pod, i, err)
			break
		}
		logs = append(logs, d)
		d, err = s.execRoundTrip(ctx, execCfg, pod, &fallbacks)
		if err != nil {
			phaseErr = fmt.Errorf("exec in %s (round %d): %w", pod, i, err)
			break
		}
		execs = append(execs, d)
	}
	secs := time.Since(t0).Seconds()
	after, err := s.agent.sample()
	maxRSS := rss()
	if err != nil {
		return nil, err
	}
	res.Profiles = append(res.Profiles, waitProfile()...)
	cpu := after.CPUSeconds - before.CPUSeconds
	lat := &APILatencyResult{
		Rounds: len(execs), Logs: percentiles(logs), Exec: percentiles(execs), ExecFallbacks: int(fallbacks.Load()),
		Seconds: secs, CPUSeconds: cpu, CPUPercent: cpu / secs * 100,
		RSSMB: float64(after.RSSBytes) / (1 << 20), MaxRSSMB: float64(max(maxRSS, after.RSSBytes)) / (1 << 20),
	}
	s.r.logf("%s: logs p50/p90/p99 %s ms, exec %s ms; agent CPU %.1f%% of a core, RSS %.1f MB (max %.1f)",
		s.name, tripleMs(lat.Logs), tripleMs(lat.Exec), lat.CPUPercent, lat.RSSMB, lat.MaxRSSMB)
	return lat, phaseErr
}

// logsRoundTrip fetches the logs of pod's container through the API server, as `kubectl logs`
// does, and returns how long the whole response took.
func (s *session) logsRoundTrip(ctx context.Context, pod string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, latencyTimeout)
	defer cancel()
	start := time.Now()
	body, err := s.client.CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: "c"}).DoRaw(ctx)
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%w (%s)", err, body)
	}
	if len(body) == 0 {
		return 0, fmt.Errorf("empty logs")
	}
	return d, nil
}

// execRoundTrip runs `echo ok` in pod's container through the API server with a new executor,
// as one `kubectl exec` does (WebSocket first, SPDY when the upgrade is refused; fallbacks
// counts those), and returns the time from the executor's creation to the stream's end.
func (s *session) execRoundTrip(ctx context.Context, cfg *rest.Config, pod string, fallbacks *atomic.Int64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, latencyTimeout)
	defer cancel()
	start := time.Now()
	u := s.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(s.ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "c", Command: []string{"echo", "ok"}, Stdout: true, Stderr: true}, scheme.ParameterCodec).
		URL()
	spdyExec, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		return 0, err
	}
	wsExec, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return 0, err
	}
	exec, err := remotecommand.NewFallbackExecutor(wsExec, spdyExec, func(err error) bool {
		fall := httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		if fall {
			fallbacks.Add(1)
		}
		return fall
	})
	if err != nil {
		return 0, err
	}
	var stdout, stderr bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%w (stderr %q)", err, stderr.String())
	}
	if got := stdout.String(); got != "ok\n" {
		return 0, fmt.Errorf("stdout %q, want %q (stderr %q)", got, "ok\n", stderr.String())
	}
	return d, nil
}

// sampleRSS samples the agent's resident set every rssSampleInterval until the returned
// function is called, which stops the sampling and returns the largest value seen (VmHWM
// would be the whole process's life, start-up included).
func (s *session) sampleRSS(ctx context.Context) (stop func() int64) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var peak int64
	wg.Go(func() {
		t := time.NewTicker(rssSampleInterval)
		defer t.Stop()
		for {
			if p, err := s.agent.sample(); err == nil {
				peak = max(peak, p.RSSBytes)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() int64 {
		cancel()
		wg.Wait()
		return peak
	}
}

// spreadIndex is the pod of round i among n: consecutive rounds go to pods far apart and, for
// up to n rounds, never the same pod twice (the stride is prime, so unless n is a multiple of
// it the stride is coprime to n and i → i·stride mod n is a permutation).
func spreadIndex(i, n int) int {
	const stride = 7919
	if n%stride == 0 {
		return i % n
	}
	return i * stride % n
}

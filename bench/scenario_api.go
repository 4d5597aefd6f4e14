package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// runAPIPods creates n pods bound to the agent's node through the API server (Parallel in
// flight), waits for all to be Running, optionally measures an idle window, then deletes
// them (default grace) and waits until all are gone.
func runAPIPods(ctx context.Context, s *session, n int, idle, timeout time.Duration) (*Result, error) {
	res, names, err := startAPIPods(ctx, s, n, timeout)
	if err != nil {
		return nil, err
	}
	if idle > 0 {
		if res.Idle, err = s.measureIdle(ctx, res, idle); err != nil {
			return nil, err
		}
	}
	if err := deleteAPIPods(ctx, s, res, names, timeout); err != nil {
		return nil, err
	}
	return res, nil
}

// startAPIPods starts the agent, creates n pods bound to its node (Parallel in flight) and
// waits for all to be Running; res holds the start phase's numbers, names the pods'.
func startAPIPods(ctx context.Context, s *session, n int, timeout time.Duration) (*Result, []string, error) {
	ready, err := s.startAgent(ctx, n+100)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Pods: n, AgentReadySeconds: ready.Seconds()}

	begin, err := s.beginPhase(ctx)
	if err != nil {
		return nil, nil, err
	}
	waitProfile := s.startProfile(ctx, "start", profileSeconds(n))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("pod-%05d", i)
	}
	sent := make([]time.Time, n)
	start := time.Now()
	s.r.logf("%s: creating %d pods", s.name, n)
	err = s.parallel(ctx, n, func(ctx context.Context, i int) error {
		sent[i] = time.Now()
		_, err := s.client.CoreV1().Pods(s.ns).Create(ctx, benchPod(s.ns, names[i], s.node), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create pods: %w", err)
	}
	s.r.logf("%s: created in %.1fs; waiting for Running", s.name, time.Since(start).Seconds())
	if err := s.finishStart(ctx, res, startRun{what: "pods", names: names, sent: sent, start: start, begin: begin, timeout: timeout, waitProfile: waitProfile}); err != nil {
		return nil, nil, err
	}
	return res, names, nil
}

// deleteAPIPods deletes the pods named (default grace), waits until all are gone and adds
// the delete phase's numbers to res.
func deleteAPIPods(ctx context.Context, s *session, res *Result, names []string, timeout time.Duration) error {
	n := len(names)
	s.r.logf("%s: deleting", s.name)
	b, err := s.beginPhase(ctx)
	if err != nil {
		return err
	}
	waitDeleteProfile := s.startProfile(ctx, "delete", profileSeconds(n))
	if res.DeleteSeconds, err = s.deleteAll(ctx, names, timeout); err != nil {
		return err
	}
	s.r.logf("%s: all deleted after %.2fs", s.name, res.DeleteSeconds)
	s.settle(ctx, 2*time.Second, 30*time.Second)
	cpu, use, err := s.endPhase(ctx, b)
	if err != nil {
		return err
	}
	res.DeleteCPUSeconds, res.DeleteRequests, res.DeleteWatchesClosed = cpu, use.Requests, use.WatchesClosed
	res.DeleteControlPlaneCPUSeconds = use.ControlPlaneCPUSeconds
	res.Profiles = append(res.Profiles, waitDeleteProfile()...)
	return nil
}

// deleteAll deletes the pods named (default grace, Parallel in flight), waits until the
// watcher has seen that many pods gone and returns the seconds from the first delete to the
// last gone.
func (s *session) deleteAll(ctx context.Context, names []string, timeout time.Duration) (float64, error) {
	start := time.Now()
	err := s.parallel(ctx, len(names), func(ctx context.Context, i int) error {
		err := s.client.CoreV1().Pods(s.ns).Delete(ctx, names[i], metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete pods: %w", err)
	}
	return s.waitAllDeleted(ctx, len(names), start, timeout, "pods")
}

// waitAllDeleted waits until the watcher has seen n pods gone and returns the seconds from
// start to the last gone.
func (s *session) waitAllDeleted(ctx context.Context, n int, start time.Time, timeout time.Duration, what string) (float64, error) {
	if err := s.watcher.waitProgress(ctx, stallTimeout, timeout, "all "+what+" deleted", func(w *podWatcher) bool { return w.deleted >= n }); err != nil {
		_, deleted := s.watcher.counts()
		return 0, fmt.Errorf("%w (%d of %d deleted)", err, deleted, n)
	}
	var gone []time.Time
	for _, p := range s.watcher.all() {
		gone = append(gone, p.Deleted)
	}
	return lastOf(gone).Sub(start).Seconds(), nil
}

// measureIdle lets the agent run for d with nothing changing and returns what it spent: CPU,
// API requests and the pods it resynced. A CPU profile of the window, if taken, is added to
// res.Profiles.
func (s *session) measureIdle(ctx context.Context, res *Result, d time.Duration) (*IdleResult, error) {
	s.r.logf("%s: idle for %s", s.name, d)
	b, err := s.beginPhase(ctx)
	if err != nil {
		return nil, err
	}
	waitIdleProfile := s.startProfile(ctx, "idle", int(d.Seconds()))
	queuesBefore := s.queueStats(ctx)
	t0 := time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	cpu, use, err := s.endPhase(ctx, b)
	if err != nil {
		return nil, err
	}
	reqs, nodeReqs := use.Requests, use.NodeRequests
	secs := time.Since(t0).Seconds()
	idle := &IdleResult{Seconds: secs, CPUSeconds: cpu, CPUPercent: cpu / secs * 100, Requests: reqs, NodeRequests: nodeReqs, Writes: reqs.writes(),
		WatchesClosed: use.WatchesClosed,
		Syncs:         map[string]float64{}}
	for q, st := range s.queueStats(ctx) {
		idle.Syncs[q] = st.Items - queuesBefore[q].Items
	}
	res.Profiles = append(res.Profiles, waitIdleProfile()...)
	return idle, nil
}

// fillStartLatencies computes the start-up numbers from the watcher's record: names[i] was
// sent at sent[i]; start is when the first request was sent.
func fillStartLatencies(res *Result, pods []podTimes, names []string, sent []time.Time, start time.Time) {
	sentAt := make(map[string]time.Time, len(names))
	for i, n := range names {
		sentAt[n] = sent[i]
	}
	var startLat, readyLat []time.Duration
	var runningAt []time.Time
	for _, p := range pods {
		t0, ok := sentAt[p.Name]
		if !ok || p.Running.IsZero() {
			continue
		}
		runningAt = append(runningAt, p.Running)
		startLat = append(startLat, p.Running.Sub(t0))
		if !p.ReadyLTT.IsZero() {
			readyLat = append(readyLat, p.ReadyLTT.Sub(p.Created.Time))
		}
	}
	res.StartLatency = percentiles(startLat)
	res.ReadyLatency = percentiles(readyLat)
	if len(runningAt) == 0 {
		return // no pod ran: nothing to time (and the run is marked failed, see incomplete)
	}
	res.AllRunningSeconds = lastOf(runningAt).Sub(start).Seconds()
	res.AfterLastSentSeconds = max(lastOf(runningAt).Sub(lastOf(sent)).Seconds(), 0)
	res.PodsPerSecond = float64(len(runningAt)) / res.AllRunningSeconds
}

// parallel runs f for 0..n-1 with Parallel calls in flight; the first error stops it.
func (s *session) parallel(ctx context.Context, n int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range min(s.r.parallel(), n) {
		wg.Go(func() {
			for i := range next {
				if err := f(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return firstErr
}

// benchPod is a minimal pod bound to node: one container, no service-account token.
func benchPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "vkbench"}},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// stallTimeout: a scenario stops waiting for pods when none changed state for this long.
const stallTimeout = 30 * time.Second

// profileSeconds covers the busy phase of n pods on this kind of machine, shared with other
// work: at 1000 pods creating them alone took 10 s in a loaded run, and a profile that ends
// before the pods are Running misses the agent's status writes.
func profileSeconds(n int) int {
	return min(max(n/50, 8), 60)
}

// notRunning describes a few pods the watch has not seen Running, as the API server has them.
func (s *session) notRunning(ctx context.Context, names []string) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var out []string
	for _, n := range names {
		if _, p, ok := s.watcher.byPodName(n); ok && !p.Running.IsZero() {
			continue
		}
		pod, err := s.client.CoreV1().Pods(s.ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", n, err))
		} else {
			out = append(out, fmt.Sprintf("%s: phase %q rv %s conditions %d", n, pod.Status.Phase, pod.ResourceVersion, len(pod.Status.Conditions)))
		}
		if len(out) == 5 {
			break
		}
	}
	return strings.Join(out, "; ")
}

// startRun is one start phase: pods (or mirrors) named names, each sent (created or written)
// at sent[i], the phase having begun at start / begin.
type startRun struct {
	what        string
	names       []string
	sent        []time.Time
	start       time.Time
	begin       startPhase
	timeout     time.Duration
	waitProfile func() []string
}

// finishStart waits for every pod of run to be Running (or for progress to stall), then fills
// res with the start latencies, the phase's CPU, requests and writes per pod, the agent's queue
// statistics and the profiles taken.
func (s *session) finishStart(ctx context.Context, res *Result, run startRun) error {
	n := len(run.names)
	if err := s.watcher.waitProgress(ctx, stallTimeout, run.timeout, "all "+run.what+" Running", func(w *podWatcher) bool { return w.running >= n }); err != nil {
		running, _ := s.watcher.counts()
		if !errors.Is(err, errStalled) {
			return fmt.Errorf("%w (%d of %d Running)", err, running, n)
		}
		res.NeverRunning = n - running
		res.NeverRunningPods = s.notRunning(ctx, run.names)
		s.r.logf("%s: %d %s never Running: %s", s.name, res.NeverRunning, run.what, res.NeverRunningPods)
	}
	fillStartLatencies(res, s.watcher.all(), run.names, run.sent, run.start)
	s.r.logf("%s: %d %s Running after %.2fs", s.name, n-res.NeverRunning, run.what, res.AllRunningSeconds)

	s.settle(ctx, 2*time.Second, 30*time.Second)
	cpu, use, err := s.endPhase(ctx, run.begin)
	if err != nil {
		return err
	}
	res.StartCPUSeconds, res.CPUMsPerPod = cpu, cpu*1000/float64(n)
	res.StartRequests, res.StartNodeRequests, res.StartWatchesClosed = use.Requests, use.NodeRequests, use.WatchesClosed
	res.StartControlPlaneCPUSeconds = use.ControlPlaneCPUSeconds
	res.WritesPerPod = use.Requests.podWrites() / float64(n)
	res.QueueStats = s.queueStats(ctx)
	res.Profiles = append(res.Profiles, run.waitProfile()...)
	if p := s.heapProfile(ctx); p != "" {
		res.Profiles = append(res.Profiles, p)
	}
	return nil
}

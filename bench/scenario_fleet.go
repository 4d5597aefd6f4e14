package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FleetResult is agents-20's: many agents, one control plane, the API server the resource
// they share.
type FleetResult struct {
	Agents       int `json:"agents"`
	PodsPerAgent int `json:"podsPerAgent"`
	// At rest: every agent registered and Ready, no pods, for RestSeconds. Requests per second
	// per node by "VERB resource" (server counters minus the harness's, divided by Agents), and
	// the watches each agent holds open (apiserver_longrunning_requests, WATCH).
	RestSeconds        float64            `json:"restSeconds"`
	RestPerNode        map[string]float64 `json:"restPerNode"`
	RestWatchesPerNode float64            `json:"restWatchesPerNode"`
	RestCPUPercent     float64            `json:"restCPUPercent"` // all agents together, % of a core
	// Under load: from the first pod created to the last deleted and the agents quiet again.
	LoadSeconds float64            `json:"loadSeconds"`
	LoadPerNode map[string]float64 `json:"loadPerNode"`
	// All agents together: CPU under load, resident set at rest and the sum of their peaks.
	LoadCPUSeconds float64 `json:"loadCPUSeconds"`
	RestRSSSumMB   float64 `json:"restRSSSumMB"`
	PeakRSSSumMB   float64 `json:"peakRSSSumMB"`
}

// runFleet starts agents agents with node identities of their own, measures what they cost
// the API server at rest for rest, then binds perAgent pods to each (Parallel creates in
// flight), waits for all to be Running, deletes them all and waits until they are gone.
func runFleet(ctx context.Context, s *session, agents, perAgent int, rest time.Duration) (*Result, error) {
	before, err := scrapeAPIServer(ctx, s.r.Env.Admin)
	if err != nil {
		return nil, err
	}
	var fleet []*agentProcess
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, a := range fleet {
			a.stop()
			_ = s.r.Env.Admin.CoreV1().Nodes().Delete(cctx, a.Node, metav1.DeleteOptions{})
		}
	}()
	start := time.Now()
	for i := range agents {
		spec := agentSpec{Binary: s.r.AgentBinary, Node: fmt.Sprintf("%s-%02d", s.node, i), MaxPods: perAgent + 100, ExtraArgs: s.r.AgentArgs}
		a, err := s.r.startAgent(ctx, spec)
		if err != nil {
			return nil, fmt.Errorf("agent %d: %w", i, err)
		}
		fleet = append(fleet, a)
	}
	res := &Result{Pods: agents * perAgent, AgentReadySeconds: time.Since(start).Seconds()}
	f := &FleetResult{Agents: agents, PodsPerAgent: perAgent}
	res.Fleet = f
	s.r.logf("%s: %d agents ready in %.1fs; at rest for %s", s.name, agents, res.AgentReadySeconds, rest)

	// At rest.
	s.settle(ctx, 2*time.Second, 30*time.Second)
	cpu0, _, err := fleetSample(fleet)
	if err != nil {
		return nil, err
	}
	w, err := s.beginAPI(ctx)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	select {
	case <-time.After(rest):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	use, err := s.endAPI(ctx, w)
	if err != nil {
		return nil, err
	}
	reqs := use.Requests
	cpu1, rss, err := fleetSample(fleet)
	if err != nil {
		return nil, err
	}
	now, err := scrapeAPIServer(ctx, s.r.Env.Admin)
	if err != nil {
		return nil, err
	}
	f.RestSeconds = time.Since(t0).Seconds()
	f.RestPerNode = perNodeRate(reqs, agents, f.RestSeconds)
	f.RestWatchesPerNode = (now.Watches - before.Watches) / float64(agents)
	f.RestCPUPercent = (cpu1 - cpu0) / f.RestSeconds * 100
	f.RestRSSSumMB = rss

	// Under load.
	n := agents * perAgent
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("pod-%02d-%04d", i/perAgent, i%perAgent)
	}
	w, err = s.beginAPI(ctx)
	if err != nil {
		return nil, err
	}
	sent := make([]time.Time, n)
	t0 = time.Now()
	s.r.logf("%s: creating %d pods, %d per agent", s.name, n, perAgent)
	err = s.parallel(ctx, n, func(ctx context.Context, i int) error {
		sent[i] = time.Now()
		_, err := s.client.CoreV1().Pods(s.ns).Create(ctx, benchPod(s.ns, names[i], fleet[i/perAgent].Node), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create pods: %w", err)
	}
	if err := s.watcher.waitProgress(ctx, stallTimeout, 5*time.Minute, "all pods Running", func(w *podWatcher) bool { return w.running >= n }); err != nil {
		running, _ := s.watcher.counts()
		return nil, fmt.Errorf("%w (%d of %d Running)", err, running, n)
	}
	fillStartLatencies(res, s.watcher.all(), names, sent, t0)
	s.r.logf("%s: all Running after %.2fs; deleting", s.name, res.AllRunningSeconds)
	if res.DeleteSeconds, err = s.deleteAll(ctx, names, 5*time.Minute); err != nil {
		return nil, err
	}
	s.settle(ctx, 2*time.Second, 30*time.Second)
	if use, err = s.endAPI(ctx, w); err != nil {
		return nil, err
	}
	reqs = use.Requests
	cpu2, _, err := fleetSample(fleet)
	if err != nil {
		return nil, err
	}
	f.LoadSeconds = time.Since(t0).Seconds()
	f.LoadPerNode = perNodeRate(reqs, agents, f.LoadSeconds)
	f.LoadCPUSeconds = cpu2 - cpu1
	for _, a := range fleet {
		if p, err := a.sample(); err == nil {
			f.PeakRSSSumMB += float64(p.PeakRSS) / (1 << 20)
		}
	}
	s.r.logf("%s: all deleted after %.2fs", s.name, res.DeleteSeconds)
	// The session checks its own agent; the fleet's are these.
	var crashed []error
	for _, a := range fleet {
		crashed = append(crashed, a.exitedEarly())
	}
	return res, errors.Join(crashed...)
}

// fleetSample is the agents' CPU seconds so far and their resident sets now, summed (MB).
func fleetSample(fleet []*agentProcess) (cpu, rssMB float64, err error) {
	for _, a := range fleet {
		p, err := a.sample()
		if err != nil {
			return 0, 0, err
		}
		cpu += p.CPUSeconds
		rssMB += float64(p.RSSBytes) / (1 << 20)
	}
	return cpu, rssMB, nil
}

// perNodeRate is reqs per second per node over secs seconds.
func perNodeRate(reqs requestCounts, nodes int, secs float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range reqs {
		out[k] = v / float64(nodes) / secs
	}
	return out
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vk-static/vk-static/test/support/agentproc"
)

// processQuiet is process-100's quiet window: long enough for the agent's per-pod work to
// settle into its steady state, short enough for `make bench`.
const processQuiet = 20 * time.Second

// processesGoneTimeout is how long after the last mirror pod is gone the harness waits for the
// last container process to end: the pods' default grace period (30 s) and a margin.
const processesGoneTimeout = 45 * time.Second

// processManifest is a static pod whose one container runs `sleep 3600`: with the process
// provider a real process under a supervisor of its own.
func processManifest(name, ns string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    command: ["sleep", "3600"]
`, name, ns)
}

// runProcessPods runs n static pods of one `sleep 3600` container each on the process
// provider: it writes the manifests in one burst and waits for every mirror Running, lets them
// run for quiet and measures the agent and the supervisors, then removes the manifests, waits
// for every mirror to be gone and for every supervisor and workload to end. Processes left
// after that fail the scenario (the result is still returned, with Error set).
func runProcessPods(ctx context.Context, s *session, n int, quiet time.Duration) (*Result, error) {
	ready, err := s.startAgent(ctx, n+100, "--provider", "process")
	if err != nil {
		return nil, err
	}
	res := &Result{Pods: n, AgentReadySeconds: ready.Seconds(), Process: &ProcessResult{}}
	files, err := s.startStaticPods(ctx, res, n, func(name string) []byte { return processManifest(name, s.ns) })
	if err != nil {
		return nil, err
	}
	cpuBefore := s.supervisorCPU()
	if res.Idle, err = s.measureIdle(ctx, res, quiet); err != nil {
		return nil, err
	}
	running, err := s.measureContainers(res.Process, cpuBefore, res.Idle.Seconds)
	if err != nil {
		return nil, err
	}
	s.workloads = running
	s.r.logf("%s: agent RSS %.1f MB; %d supervisors: RSS %.1f MB in all (median %.2f), private %.1f MB, Pss %.1f MB; %d workloads",
		s.name, res.Process.AgentRSSMB, res.Process.Supervisors, res.Process.SupervisorRSSSumMB, res.Process.SupervisorRSSMB,
		res.Process.SupervisorAnonSumMB, res.Process.SupervisorPssSumMB, res.Process.Workloads)
	if res.Process.Supervisors != n || res.Process.Workloads != n {
		s.r.logf("%s: expected %d supervisors and %d workloads", s.name, n, n)
	}

	gone := s.watchContainersGone(ctx, running)
	delStart, err := s.removeStaticPods(ctx, res, files)
	if err != nil {
		gone(0) // stops the watch; the session kills what is left
		return nil, err
	}
	goneAt, left := gone(processesGoneTimeout)
	res.Process.ProviderCalls = s.providerCalls(ctx, "CreatePod", "UpdatePod", "DeletePod")
	if left.Len() > 0 {
		res.Process.Leftovers, res.Process.LeftoverProcesses = left.Len(), left.String()
		res.Error = fmt.Sprintf("%d container processes left %s after every mirror pod was gone: %s",
			left.Len(), processesGoneTimeout, left)
		return res, fmt.Errorf("%s", res.Error)
	}
	res.Process.ProcessesGoneSeconds = goneAt.Sub(delStart).Seconds()
	s.r.logf("%s: every supervisor and workload gone %.2fs after the first manifest was removed", s.name, res.Process.ProcessesGoneSeconds)
	return res, nil
}

// supervisorCPU is the CPU time (user + system) each live supervisor of the agent has spent so
// far, by pid.
func (s *session) supervisorCPU() map[int]float64 {
	out := map[int]float64{}
	procs, err := agentproc.FindContainers(s.agent.Dir, nil)
	if err != nil {
		return out
	}
	for pid := range procs.Supervisors {
		if p, err := readProc(pid); err == nil {
			out[pid] = p.CPUSeconds
		}
	}
	return out
}

// measureContainers samples the agent's and every container process's resident set into pr,
// and the supervisors' CPU time: in all since they started, and in the quiet window (window
// seconds long, cpuBefore sampled at its start). It returns the workloads it found: the
// processes that must be gone once the pods are removed.
func (s *session) measureContainers(pr *ProcessResult, cpuBefore map[int]float64, window float64) ([]agentproc.Workload, error) {
	p, err := s.agent.sample()
	if err != nil {
		return nil, err
	}
	pr.AgentRSSMB = mb(p.RSSBytes)
	procs, err := agentproc.FindContainers(s.agent.Dir, nil)
	if err != nil {
		return nil, err
	}
	var rss, anon, pss []float64
	for pid := range procs.Supervisors {
		p, err := readProc(pid)
		if err != nil {
			continue // ended meanwhile: not one of the running containers
		}
		rss, anon = append(rss, mb(p.RSSBytes)), append(anon, mb(p.AnonBytes))
		pr.SupervisorCPUSeconds += p.CPUSeconds
		if before, ok := cpuBefore[pid]; ok {
			pr.SupervisorQuietCPUPercent += (p.CPUSeconds - before) / window * 100
		}
		if v, err := readPss(pid); err == nil {
			pss = append(pss, mb(v))
		}
	}
	pr.Supervisors = len(rss)
	pr.SupervisorRSSSumMB, pr.SupervisorRSSMB, pr.SupervisorRSSMaxMB = sum(rss), median(rss), maxOf(rss)
	pr.SupervisorAnonSumMB, pr.SupervisorAnonMB = sum(anon), median(anon)
	pr.SupervisorPssSumMB = sum(pss)
	var work []float64
	for pid := range procs.Workloads {
		if p, err := readProc(pid); err == nil {
			work = append(work, mb(p.RSSBytes))
		}
	}
	pr.Workloads, pr.WorkloadRSSSumMB = len(work), sum(work)
	var running []agentproc.Workload
	for _, w := range procs.Workloads {
		running = append(running, w)
	}
	return running, nil
}

// watchContainersGone polls, from now on, for the moment no container process of the agent is
// left: no supervisor of its containers and none of the workloads in known (their state files
// may be removed with the containers) or still recorded. wait gives it up to timeout more and
// returns that moment, or what was still left.
func (s *session) watchContainersGone(ctx context.Context, known []agentproc.Workload) (wait func(timeout time.Duration) (time.Time, agentproc.Containers)) {
	ctx, cancel := context.WithCancel(ctx)
	type outcome struct {
		at   time.Time
		left agentproc.Containers
	}
	done := make(chan outcome, 1)
	dir := s.agent.Dir
	go func() {
		var last agentproc.Containers
		err := poll(ctx, time.Hour, 200*time.Millisecond, func() (bool, error) {
			procs, err := agentproc.FindContainers(dir, known)
			if err != nil {
				return false, nil // a state file being rewritten: read it next time
			}
			last = procs
			return procs.Len() == 0, nil
		})
		if err != nil {
			done <- outcome{left: last}
			return
		}
		done <- outcome{at: time.Now()}
	}()
	return func(timeout time.Duration) (time.Time, agentproc.Containers) {
		defer cancel()
		select {
		case o := <-done:
			return o.at, o.left
		case <-time.After(timeout):
		}
		cancel()
		o := <-done
		if o.left.Len() == 0 && o.at.IsZero() {
			// Cancelled before a first look: look once more.
			o.left, _ = agentproc.FindContainers(dir, known)
		}
		return o.at, o.left
	}
}

// killContainers kills what is left of the agent's container processes (they outlive the
// agent; it is stopped first), those of the workloads the scenario saw running too: a scenario
// that failed half-way must not leave 100 sleeps on a shared machine. What it had to kill is
// returned as an error, which fails the run: a container that outlives its run is a leak.
func (s *session) killContainers() error {
	killed, err := agentproc.KillContainers(s.agent.Dir, s.workloads...)
	var errs []error
	if len(killed) > 0 {
		s.r.logf("%s: killed %d container processes left by the agent: %s", s.name, len(killed), firstProcesses(killed, 4))
		errs = append(errs, fmt.Errorf("%d container processes left when the run ended (killed): %s", len(killed), firstProcesses(killed, 4)))
	}
	if err != nil {
		s.r.logf("%s: %v", s.name, err)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// firstProcesses names at most limit of procs and says how many more there are: a log line
// for 200 processes would be unreadable.
func firstProcesses(procs []agentproc.ContainerProcess, limit int) string {
	var parts []string
	for _, p := range procs[:min(limit, len(procs))] {
		parts = append(parts, p.String())
	}
	if len(procs) > limit {
		parts = append(parts, fmt.Sprintf("and %d more", len(procs)-limit))
	}
	return strings.Join(parts, ", ")
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

// median is the middle value (the mean of the two middle ones for an even count); 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

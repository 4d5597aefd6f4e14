package bench

import (
	"context"
	"fmt"
	"time"
)

// Scenario is one measurement. Quick scenarios are what `make bench` runs.
type Scenario struct {
	Name        string
	Quick       bool
	Description string
	// Peers are the peers besides vk-static the scenario can run against (vkbench -peers):
	// KWOK has no static pods, so static-1k runs only with the floor.
	Peers []string
	run   func(ctx context.Context, s *session) (*Result, error)
}

// Scenarios are every scenario of issue 6. All but process-100 and cri-50 run the agent with
// the mock provider; process-100 runs real processes (`sleep`) under the process provider,
// cri-50 containers from an image under the CRI provider (issue 16).
func Scenarios() map[string]Scenario {
	list := []Scenario{
		{Name: "api-1k", Quick: true, Peers: []string{PeerFloor, PeerKWOK}, Description: "1000 API pods bound to the node: create, all Running, delete",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runAPIPods(ctx, s, 1000, 0, 5*time.Minute)
			}},
		{Name: "static-1k", Quick: true, Peers: []string{PeerFloor}, Description: "1000 manifest files written in one burst: every mirror Running, then removed",
			run: func(ctx context.Context, s *session) (*Result, error) { return runStaticPods(ctx, s, 1000) }},
		{Name: "edit-latency", Quick: true, Description: "100 edits of 10 static pods: edit → provider called, edit → new mirror Running",
			run: func(ctx context.Context, s *session) (*Result, error) { return runEdits(ctx, s, 10, 100) }},
		{Name: "idle-1k", Quick: true, Description: "1000 API pods Running, then a quiet window: agent CPU and API writes",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runAPIPods(ctx, s, 1000, s.r.idle(), 5*time.Minute)
			}},
		{Name: "api-latency", Quick: true, Description: "1000 API pods Running, then 200 `kubectl logs` and 200 `kubectl exec -- echo ok` round trips through the API server, one at a time: their latency and the agent's CPU and RSS meanwhile",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runAPILatency(ctx, s, 1000, 200, 5*time.Minute)
			}},
		{Name: "process-100", Quick: true, Description: "100 static pods running `sleep 3600` on the process provider: every mirror Running, agent and supervisor cost while they run, removed with no process left",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runProcessPods(ctx, s, 100, processQuiet)
			}},
		{Name: "cri-50", Peers: []string{PeerKubelet, PeerCRIFloor}, Description: "50 static pods from one image on the CRI provider and a throwaway containerd: every mirror Running, the agent's CPU and RSS beside containerd's and its shims' while they run, removed with no container left",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runCRIPods(ctx, s, 50, criQuiet)
			}},
		{Name: "api-10k", Peers: []string{PeerFloor, PeerKWOK}, Description: "10,000 API pods bound to the node: create, all Running, delete",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runAPIPods(ctx, s, 10000, 0, 15*time.Minute)
			}},
		{Name: "agents-20", Description: "20 agents (node identities) on one control plane, 100 API pods each: what each costs the API server at rest and under load, the agents' CPU and RSS together",
			run: func(ctx context.Context, s *session) (*Result, error) {
				return runFleet(ctx, s, 20, 100, 60*time.Second)
			}},
	}
	m := make(map[string]Scenario, len(list))
	for _, sc := range list {
		m[sc.Name] = sc
	}
	return m
}

// ScenarioNames lists the scenarios in the order they are run: quick ones first.
func ScenarioNames(quickOnly bool) []string {
	order := []string{"api-1k", "static-1k", "edit-latency", "idle-1k", "api-latency", "process-100", "cri-50", "api-10k", "agents-20"}
	all := Scenarios()
	var out []string
	for _, n := range order {
		if !quickOnly || all[n].Quick {
			out = append(out, n)
		}
	}
	return out
}

func (r *Runner) idle() time.Duration {
	if r.Idle <= 0 {
		return 60 * time.Second
	}
	return r.Idle
}

// startPhase is the CPU and API-request baseline of a busy phase.
type startPhase struct {
	cpu, controlPlaneCPU, scrapeCPU float64
	api                             apiWindow
}

func (s *session) beginPhase(ctx context.Context) (startPhase, error) {
	p, err := s.agent.sample()
	if err != nil {
		return startPhase{}, err
	}
	cp, err := s.controlPlaneCPU()
	if err != nil {
		return startPhase{}, err
	}
	b := startPhase{cpu: p.CPUSeconds, controlPlaneCPU: cp, scrapeCPU: s.scrapeCPU}
	b.api, err = s.beginAPI(ctx) // a scrape in the window: counted in scrapeCPU
	return b, err
}

// endPhase returns the agent CPU seconds and its use of the API since beginPhase.
func (s *session) endPhase(ctx context.Context, b startPhase) (float64, apiUse, error) {
	p, err := s.agent.sample()
	if err != nil {
		return 0, apiUse{}, err
	}
	cp, err := s.controlPlaneCPU()
	if err != nil {
		return 0, apiUse{}, err
	}
	scrapes := s.scrapeCPU - b.scrapeCPU // beginAPI's and settle's, in the window
	use, err := s.endAPI(ctx, b.api)
	use.ControlPlaneCPUSeconds = cp - b.controlPlaneCPU - scrapes
	return p.CPUSeconds - b.cpu, use, err
}

// controlPlaneCPU is the CPU seconds etcd and the API server have used so far.
func (s *session) controlPlaneCPU() (float64, error) {
	var sum float64
	for _, pid := range s.r.Env.ControlPlanePIDs() {
		p, err := readProc(pid)
		if err != nil {
			return 0, fmt.Errorf("control plane: %w", err)
		}
		sum += p.CPUSeconds
	}
	return sum, nil
}

// lastOf returns the latest time in ts.
func lastOf(ts []time.Time) time.Time {
	var last time.Time
	for _, t := range ts {
		if t.After(last) {
			last = t
		}
	}
	return last
}

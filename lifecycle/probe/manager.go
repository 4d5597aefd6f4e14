package probe

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Manager runs the probes of running container instances, as the kubelet's prober manager: a
// worker per instance and probe kind, each probing on its own period and counting its own
// thresholds. Its methods are safe for concurrent use.
type Manager struct {
	clk      clock.WithTicker
	onChange func(Update)
	onEvent  func(Event)
	// metrics, when set (WithMetrics), count and time the probes' attempts.
	metrics *Metrics
	// start is when the Manager was made: workers added within one period of it (the agent
	// just started and finds containers running) wait a random part of the period first, so
	// that the probes of all those containers do not run at once.
	start time.Time
	// jitter picks that wait; tests replace it.
	jitter func(period time.Duration) time.Duration
	// spawn, when set, is given each new worker instead of starting its goroutine: tests drive
	// workers' probes themselves.
	spawn func(ctx context.Context, w *worker)

	wg sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	instances map[instanceKey]*instance
}

// Option configures a Manager.
type Option func(*Manager)

// WithEvents sets where the Manager reports each probe attempt that the kubelet records as a
// Warning event (failed, errored, passed with a warning). It is called from the workers'
// goroutines and must not block.
func WithEvents(onEvent func(Event)) Option {
	return func(m *Manager) { m.onEvent = onEvent }
}

// NewManager returns a Manager on clk that reports verdict changes to onChange (nil: none).
// onChange is called from the workers' goroutines, for different instances at the same time,
// and must not block nor call back into the Manager while holding what its caller holds.
func NewManager(clk clock.WithTicker, onChange func(Update), opts ...Option) *Manager {
	m := &Manager{
		clk:       clk,
		onChange:  onChange,
		start:     clk.Now(),
		jitter:    func(period time.Duration) time.Duration { return rand.N(period) },
		instances: map[instanceKey]*instance{},
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

// instanceKey names one container instance.
type instanceKey struct {
	pod       types.UID
	container string
	instance  string
}

// instance is what the Manager holds for one container instance.
type instance struct {
	cancel  context.CancelFunc
	workers map[Kind]*worker
	// results holds a verdict for each kind the container has a probe of.
	results map[Kind]Result
}

// initialResult is a kind's verdict before its probe decides, as the kubelet's: not ready,
// alive, not yet known to have started.
func initialResult(k Kind) Result {
	switch k {
	case Readiness:
		return Failure
	case Liveness:
		return Success
	default:
		return Unknown
	}
}

// probeOf is the container's probe of kind k, or nil.
func probeOf(c *corev1.Container, k Kind) *corev1.Probe {
	switch k {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	case Startup:
		return c.StartupProbe
	}
	return nil
}

// restartGrace is how long before the Manager's start an instance must have started to count as
// found running by a restarted agent, as the kubelet's kubeletRestartGracePeriod.
const restartGrace = 10 * time.Second

// AddOption refines Add.
type AddOption func(*addOptions)

type addOptions struct {
	prior *priorStatus
}

type priorStatus struct{ started, ready bool }

// WithPriorStatus gives the started and ready the API server's status holds for an instance the
// agent found running when it started. The kubelet keeps those, rather than starting over from
// the initial verdicts, for a container that started more than 10 seconds before it did: a
// started container is not startup-probed again, and a ready one stays ready until its readiness
// probe decides otherwise. It is ignored for an instance that started after that, so a caller
// can pass what it has for every instance.
func WithPriorStatus(started, ready bool) AddOption {
	return func(o *addOptions) { o.prior = &priorStatus{started: started, ready: ready} }
}

// Add starts probing one running instance of container c (the pod's spec of it) that started at
// startedAt; t says how to reach it, and gets c's ports and env where it has none. Every running
// instance is added, with probes or not, since Started and Ready answer only for added ones.
// Adding an instance again does nothing. The instance's workers end when ctx ends, when it is
// removed, or at Close.
//
// Add seeds each probed kind with its initial verdict — readiness Failure, liveness Success,
// startup Unknown, or what WithPriorStatus says — without an Update: Updates report what the
// probes decide after that.
func (m *Manager) Add(ctx context.Context, podUID types.UID, c *corev1.Container, instanceID string, startedAt time.Time, t Target, opts ...AddOption) {
	key := instanceKey{pod: podUID, container: c.Name, instance: instanceID}
	if t.Ports == nil {
		t.Ports = c.Ports
	}
	if t.Env == nil {
		t.Env = c.Env
	}
	var o addOptions
	for _, opt := range opts {
		opt(&o)
	}
	prior := o.prior
	if prior != nil && !startedAt.Before(m.start.Add(-restartGrace)) {
		prior = nil
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if _, ok := m.instances[key]; ok {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	inst := &instance{cancel: cancel, workers: map[Kind]*worker{}, results: map[Kind]Result{}}
	m.instances[key] = inst
	for _, k := range kinds {
		spec := probeOf(c, k)
		if spec == nil {
			continue
		}
		inst.results[k] = initialResult(k)
		if prior != nil {
			switch {
			case k == Startup && prior.started:
				// Started before the agent restarted: nothing left to probe.
				inst.results[k] = Success
				continue
			case k == Readiness && prior.ready:
				inst.results[k] = Success
			}
		}
		wctx, wcancel := context.WithCancel(ctx)
		w := newWorker(m, key, k, withDefaults(spec), startedAt, t, wcancel)
		inst.workers[k] = w
		if m.spawn != nil {
			m.spawn(wctx, w)
			continue
		}
		m.wg.Add(1)
		go w.run(wctx)
	}
}

// RemoveInstance stops probing an instance (it exited, or is being replaced) and forgets its
// verdicts. A probe already running is cancelled; an Update it was about to send is dropped.
func (m *Manager) RemoveInstance(podUID types.UID, container, instanceID string) {
	key := instanceKey{pod: podUID, container: container, instance: instanceID}
	m.mu.Lock()
	defer m.mu.Unlock()
	if inst, ok := m.instances[key]; ok {
		inst.cancel()
		delete(m.instances, key)
	}
}

// RemovePod stops probing every instance of the pod's containers.
func (m *Manager) RemovePod(podUID types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, inst := range m.instances {
		if key.pod == podUID {
			inst.cancel()
			delete(m.instances, key)
		}
	}
	if m.metrics != nil {
		m.metrics.forget(podUID)
	}
}

// StopLivenessAndStartup stops the liveness and startup probes of the pod's instances, as the
// kubelet does when it starts killing a pod: a container being stopped is not restarted for
// failing them. Readiness probes keep running through the grace period, so the pod's endpoints
// follow the container's own readiness while it shuts down. The verdicts stay as they were.
func (m *Manager) StopLivenessAndStartup(podUID types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, inst := range m.instances {
		if key.pod != podUID {
			continue
		}
		for _, k := range [...]Kind{Liveness, Startup} {
			if w, ok := inst.workers[k]; ok {
				w.cancel()
				delete(inst.workers, k)
			}
		}
	}
	if m.metrics != nil {
		m.metrics.forget(podUID, Liveness, Startup)
	}
}

// Result is the instance's current verdict of kind k: Unknown for an instance not added or a
// kind the container has no probe of.
func (m *Manager) Result(podUID types.UID, container, instanceID string, k Kind) Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	if inst, ok := m.instances[instanceKey{pod: podUID, container: container, instance: instanceID}]; ok {
		return inst.results[k]
	}
	return Unknown
}

// Started is the container status's started: an added instance with no startup probe, or whose
// startup probe has passed.
func (m *Manager) Started(podUID types.UID, container, instanceID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startedLocked(instanceKey{pod: podUID, container: container, instance: instanceID})
}

// Ready is the container status's ready: started, and with no readiness probe or one that
// has passed.
func (m *Manager) Ready(podUID types.UID, container, instanceID string) bool {
	key := instanceKey{pod: podUID, container: container, instance: instanceID}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.startedLocked(key) {
		return false
	}
	r, probed := m.instances[key].results[Readiness]
	return !probed || r == Success
}

func (m *Manager) startedLocked(key instanceKey) bool {
	inst, ok := m.instances[key]
	if !ok {
		return false
	}
	r, probed := inst.results[Startup]
	return !probed || r == Success
}

// Close stops every worker and waits for them to end. Add does nothing after it.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for key, inst := range m.instances {
		inst.cancel()
		delete(m.instances, key)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// started is whether liveness and readiness may probe the instance yet.
func (m *Manager) started(key instanceKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startedLocked(key)
}

// record stores a worker's verdict and reports it if it changed. A startup probe's pass sets
// the instance's readiness worker to probe now rather than at its next tick, as the kubelet's
// status sync does for a started container that is not ready — after the startup Update has
// been delivered, so that a caller that keeps its own started flag has it set before the
// readiness Update that depends on it can arrive.
func (m *Manager) record(w *worker, r Result, msg string) {
	m.mu.Lock()
	inst, ok := m.instances[w.key]
	if !ok || inst.workers[w.kind] != w {
		// Removed, or stopped, while probing.
		m.mu.Unlock()
		return
	}
	prev := inst.results[w.kind]
	inst.results[w.kind] = r
	var readiness *worker
	if w.kind == Startup && r == Success {
		readiness = inst.workers[Readiness]
	}
	m.mu.Unlock()

	if prev != r && m.onChange != nil {
		m.onChange(Update{PodUID: w.key.pod, Container: w.key.container, Instance: w.key.instance, Kind: w.kind, Result: r, Message: msg})
	}
	if readiness != nil {
		readiness.triggerNow()
	}
}

// count counts a worker's attempt that reached verdict r in d, unless the worker was removed or
// stopped meanwhile: under the Manager's lock, so that no count brings back the series of a pod
// that RemovePod has just forgotten.
func (m *Manager) count(w *worker, r Result, d time.Duration) {
	if m.metrics == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if inst, ok := m.instances[w.key]; !ok || inst.workers[w.kind] != w {
		return
	}
	m.metrics.observe(w.kind, w.key.pod, podName{namespace: w.target.PodNamespace, name: w.target.PodName}, w.key.container, r, d)
}

// event reports one probe attempt the kubelet records as an event.
func (m *Manager) event(w *worker, reason, msg string) {
	if m.onEvent != nil {
		m.onEvent(Event{PodUID: w.key.pod, Container: w.key.container, Instance: w.key.instance, Kind: w.kind, Reason: reason, Message: msg})
	}
}

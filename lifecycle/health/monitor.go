package health

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/nodecondition"
)

// Defaults, the kubelet's: it asks the runtime's status every 5 s (updateRuntimeUp) and calls
// the runtime down when no status said RuntimeReady for 30 s (maxWaitForContainerRuntime).
const (
	DefaultPeriod    = 5 * time.Second
	DefaultThreshold = 30 * time.Second
)

// The Ready condition's reasons and message, the kubelet's (its "kubelet is posting ready
// status" names this agent instead, as the node package's default condition does).
const (
	ReasonReady    = "KubeletReady"
	ReasonNotReady = "KubeletNotReady"
	MessageReady   = "vk-static is posting ready status"
)

// Config configures a Monitor. Checker is required.
type Config struct {
	Checker Checker
	// Period is how often the runtime is asked; default DefaultPeriod. One question may take
	// as long: an answer that takes longer counts as none.
	Period time.Duration
	// Threshold is how long the runtime may go without a RuntimeReady status before it is
	// down; default DefaultThreshold.
	Threshold time.Duration
	// Clock is the time source; nil is the real clock.
	Clock clock.WithTicker
	// NotReady, when set, is another reason for the node not to be ready (the node shutdown
	// manager's "node is shutting down"), joined after the runtime's and the network's as the
	// kubelet's ReadyCondition joins its shutdown manager's; nil when there is none.
	NotReady func() error
}

// Monitor follows a runtime's health and reports the Node's Ready condition from it. Build it
// with NewMonitor and run it with Run; it is safe for concurrent use.
type Monitor struct {
	cfg      Config
	reporter nodecondition.Reporter

	mu    sync.Mutex
	state state
}

// NewMonitor returns a Monitor of cfg.Checker; until its first question the runtime is not
// known to be ready.
func NewMonitor(cfg Config) *Monitor {
	if cfg.Period <= 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Threshold <= 0 {
		cfg.Threshold = DefaultThreshold
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Monitor{cfg: cfg, state: newState(cfg.Threshold)}
}

// Run asks the runtime at once and then every Period until ctx ends, reporting the Ready
// condition whenever it changes.
func (m *Monitor) Run(ctx context.Context) error {
	return nodecondition.Every(ctx, m.cfg.Clock, m.cfg.Period, func(ctx context.Context) bool {
		m.Check(ctx)
		return false
	})
}

// Check asks the runtime once and reports the Ready condition if it changed.
func (m *Monitor) Check(ctx context.Context) {
	logger := klog.FromContext(ctx)
	cctx, cancel := context.WithTimeout(ctx, m.cfg.Period)
	st, err := m.cfg.Checker.Status(cctx)
	cancel()
	if ctx.Err() != nil {
		return // shutting down: not the runtime's fault
	}
	if err != nil {
		logger.Error(err, "Container runtime sanity check failed")
	} else {
		logger.V(4).Info("Container runtime status", "status", st)
	}
	m.mu.Lock()
	m.state.update(st, err, m.cfg.Clock.Now())
	m.mu.Unlock()
	m.report(logger)
}

// Report reports the Ready condition now if it changed, without asking the runtime: for a
// Config.NotReady that changed, which must not wait for the runtime's answer.
func (m *Monitor) Report(ctx context.Context) { m.report(klog.FromContext(ctx)) }

// Err says why the runtime cannot run pods, as the Ready condition's message; nil when it can.
func (m *Monitor) Err() error {
	m.mu.Lock()
	err := m.state.errors(m.cfg.Clock.Now())
	m.mu.Unlock()
	if m.cfg.NotReady == nil {
		return err
	}
	return utilerrors.NewAggregate([]error{err, m.cfg.NotReady()})
}

// RuntimeErr says why the runtime cannot run containers, the network aside: what the kubelet's
// sync loop waits for (it goes on with host-network pods while the network is not ready), and
// what /healthz and /readyz report. Nil when it can.
func (m *Monitor) RuntimeErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.runtimeErrors(m.cfg.Clock.Now())
}

// ReadyCondition is the Node's Ready condition now, as the kubelet's ReadyCondition setter
// computes it from its runtime state (times are the node controller's to set).
func (m *Monitor) ReadyCondition() corev1.NodeCondition {
	if err := m.Err(); err != nil {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: ReasonNotReady, Message: err.Error()}
	}
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: ReasonReady, Message: MessageReady}
}

// Ping never fails: the agent answers, so its Lease is renewed; the runtime's health is in the
// Ready condition, as with the kubelet.
func (m *Monitor) Ping(context.Context) error { return nil }

// NotifyNodeStatus registers cb, which receives a Node holding the Ready condition now and
// whenever it changes. cb is called once before NotifyNodeStatus returns.
func (m *Monitor) NotifyNodeStatus(ctx context.Context, cb func(*corev1.Node)) {
	m.reporter.Register(cb)
	m.report(klog.FromContext(ctx))
}

// report passes the Ready condition to the registered callback when it differs from the last
// one passed.
func (m *Monitor) report(logger klog.Logger) {
	m.reporter.Report(func() []corev1.NodeCondition {
		return []corev1.NodeCondition{m.ReadyCondition()}
	}, func(_, c corev1.NodeCondition) {
		if c.Status == corev1.ConditionTrue {
			logger.Info("Container runtime ready: the node is ready")
		} else {
			logger.Info("Container runtime not ready: the node is not ready", "message", c.Message)
		}
	})
}

package nodeshutdown

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// reconnectPeriod is how long Run waits before connecting again after losing logind, the
// kubelet's dbusReconnectPeriod.
const reconnectPeriod = time.Second

// eventNodeShutdown is the reason of the node's events about a shutdown, the kubelet's.
const eventNodeShutdown = "NodeShutdown"

// Manager delays the host's shutdown to stop the node's pods gracefully. Build it with
// NewManager, run it with Run; it is safe for concurrent use.
type Manager struct {
	cfg   Config
	bands []PriorityGracePeriod

	mu           sync.Mutex
	shuttingDown bool
	lock         *os.File // logind's inhibitor lock, while held
}

// NewManager returns a Manager of cfg, which Validate has accepted and which is Enabled.
func NewManager(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, bands: Groups(cfg)}
}

// ShutdownStatus is ErrShuttingDown from logind's PrepareForShutdown(true) on, until a
// cancellation; nil otherwise. The Node's Ready condition joins it to the runtime's errors.
func (m *Manager) ShutdownStatus() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shuttingDown {
		return ErrShuttingDown
	}
	return nil
}

// Run takes the inhibitor lock and handles logind's shutdown signals until ctx ends,
// connecting again every second while logind cannot be reached. The lock is released when
// Run returns: an agent that stops no longer holds the shutdown back.
func (m *Manager) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	logger.Info("Starting the node shutdown manager", "shutdownGracePeriodByPodPriority", m.bands)
	for {
		if err := m.watch(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Unable to watch the node for shutdown events")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.cfg.Clock.After(reconnectPeriod):
			logger.V(1).Info("Restarting the watch for node shutdown events")
		}
	}
}

// watch is one connection to logind: the lock taken, the signals handled until the connection
// or ctx ends.
func (m *Manager) watch(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	bus, err := connectLogind(ctx, m.cfg.BusAddress)
	if err != nil {
		return err
	}
	defer func() {
		_ = bus.Close()
		m.release(logger)
	}()
	// The kubelet rewrites logind's configuration when the delay is short; vk-static leaves
	// it to the administrator (see the [nodeshutdown] package documentation), and says what is
	// wrong.
	delay, err := bus.inhibitDelayMax(ctx)
	if err != nil {
		return err
	}
	if requested := periodRequested(m.bands); requested > delay {
		logger.Error(nil, "logind's InhibitDelayMaxSec is shorter than the shutdown grace period: the shutdown will not wait for every pod; set InhibitDelayMaxSec in a logind.conf drop-in (docs/deploy.md)",
			"inhibitDelayMax", delay, "shutdownGracePeriod", requested)
	}
	if err := m.acquire(ctx, bus); err != nil {
		return err
	}
	events, err := bus.watchShutdown(ctx)
	if err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case shuttingDown, ok := <-events:
			if !ok {
				return fmt.Errorf("lost the connection to logind")
			}
			m.handle(ctx, bus, shuttingDown)
		}
	}
}

// handle is one PrepareForShutdown signal, as the kubelet's manager handles it.
func (m *Manager) handle(ctx context.Context, bus *logind, shuttingDown bool) {
	logger := klog.FromContext(ctx)
	message := "Shutdown manager detected shutdown cancellation"
	if shuttingDown {
		message = "Shutdown manager detected shutdown event"
	}
	logger.Info(message)
	if m.cfg.Recorder != nil && m.cfg.NodeRef != nil {
		m.cfg.Recorder.Event(m.cfg.NodeRef, corev1.EventTypeNormal, eventNodeShutdown, message)
	}
	m.mu.Lock()
	m.shuttingDown = shuttingDown
	m.mu.Unlock()
	if m.cfg.NodeStatusChanged != nil {
		m.cfg.NodeStatusChanged(ctx)
	}
	if !shuttingDown {
		if err := m.acquire(ctx, bus); err != nil {
			logger.Error(err, "Taking the shutdown inhibitor lock again after a cancelled shutdown")
		}
		return
	}
	m.stopPods(ctx)
	m.release(logger)
	logger.Info("Shutdown manager completed processing shutdown event, node will shutdown shortly")
}

// acquire takes a new inhibitor lock, then releases the one held before, if any.
func (m *Manager) acquire(ctx context.Context, bus *logind) error {
	lock, err := bus.inhibit(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	old := m.lock
	m.lock = lock
	m.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return nil
}

// release closes the inhibitor lock, if held: logind goes on with the shutdown.
func (m *Manager) release(logger klog.Logger) {
	m.mu.Lock()
	lock := m.lock
	m.lock = nil
	m.mu.Unlock()
	if lock != nil {
		if err := lock.Close(); err != nil {
			logger.Error(err, "Releasing the shutdown inhibitor lock")
		}
	}
}

// stopPods stops the active pods band by band, lowest priority first, as the kubelet's
// killPods: every pod of a band at once, the next band once they have stopped or the band's
// grace period has passed.
func (m *Manager) stopPods(ctx context.Context) {
	logger := klog.FromContext(ctx)
	var pods []*corev1.Pod
	if m.cfg.ActivePods != nil {
		pods = m.cfg.ActivePods()
	}
	for _, group := range groupByPriority(m.bands, pods) {
		if len(group.Pods) == 0 {
			continue // nothing to wait for
		}
		budget := time.Duration(group.GracePeriodSeconds) * time.Second
		gctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, pod := range group.Pods {
			grace := podGrace(group.PriorityGracePeriod, pod)
			wg.Go(func() {
				logger.V(1).Info("Shutdown manager stopping pod", "pod", klog.KObj(pod), "gracePeriod", grace)
				if err := m.cfg.StopPod(gctx, pod, grace, Reason, Message); err != nil {
					logger.V(1).Info("Shutdown manager failed stopping pod", "pod", klog.KObj(pod), "err", err)
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		timer := m.cfg.Clock.NewTimer(budget)
		select {
		case <-done:
			logger.V(1).Info("Done waiting for the pods of a priority band", "priority", group.Priority, "gracePeriod", budget)
		case <-timer.C():
			logger.V(1).Info("Shutdown manager timed out waiting for the pods of a priority band", "priority", group.Priority, "gracePeriod", budget)
		case <-ctx.Done():
		}
		timer.Stop()
		cancel() // StopPod's waits end; the stops themselves go on in the provider
	}
}

package probe

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/queue"
)

// maxAttempts is how many times the kubelet runs a probe that errors before giving up on that
// period (an error is no verdict, so it tries again at once).
const maxAttempts = 3

// worker probes one kind of one container instance, on its own goroutine, one probe at a time.
type worker struct {
	m         *Manager
	key       instanceKey
	kind      Kind
	spec      *corev1.Probe // defaulted
	startedAt time.Time
	target    Target
	cancel    context.CancelFunc
	// asks are asks for a probe now, under one key: asking never blocks, and asks made while
	// a probe runs coalesce into one more probe.
	asks *queue.Queue[struct{}, struct{}]
	// done is closed when the worker's goroutine ends.
	done chan struct{}

	// Owned by the worker's goroutine: the last attempt's result and how many in a row.
	lastResult Result
	resultRun  int
}

func newWorker(m *Manager, key instanceKey, kind Kind, spec *corev1.Probe, startedAt time.Time, t Target, cancel context.CancelFunc) *worker {
	asks := queue.New[struct{}, struct{}](nil)
	return &worker{
		m:         m,
		key:       key,
		kind:      kind,
		spec:      spec,
		startedAt: startedAt,
		target:    t,
		cancel:    cancel,
		asks:      asks,
		done:      make(chan struct{}),
	}
}

// triggerNow asks the worker to probe without waiting for its next tick.
func (w *worker) triggerNow() { w.asks.Add(struct{}{}, struct{}{}) }

// run probes every period until doProbe says to stop or ctx ends: at once (after the start-up
// jitter), then on each tick of the period; a triggered probe restarts the period from then.
func (w *worker) run(ctx context.Context) {
	defer w.m.wg.Done()
	defer close(w.done)
	defer w.cancel()
	logger := klog.FromContext(ctx).WithValues("pod", w.key.pod, "container", w.key.container, "instance", w.key.instance, "probe", w.kind)
	ctx = klog.NewContext(ctx, logger)

	period := time.Duration(w.spec.PeriodSeconds) * time.Second
	if w.m.clk.Since(w.m.start) < period {
		if d := w.m.jitter(period); d > 0 {
			timer := w.m.clk.NewTimer(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C():
			}
		}
	}

	ticker := w.m.clk.NewTicker(period)
	defer func() { ticker.Stop() }()
	for w.doProbe(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C():
		case <-w.asks.Ready():
			w.asks.Take()
			ticker.Stop()
			ticker = w.m.clk.NewTicker(period)
			logger.V(4).Info("Probe triggered")
		}
	}
	logger.V(3).Info("Probe worker done")
}

// doProbe probes once if it is time to, counts the result against the thresholds and records
// a verdict once one is reached. It says whether to keep probing: a liveness failure or a
// startup verdict ends the worker — the instance is about to be restarted, or has started.
func (w *worker) doProbe(ctx context.Context) (keepGoing bool) {
	if ctx.Err() != nil {
		return false
	}
	// The kubelet compares whole seconds since the container started.
	if int32(w.m.clk.Since(w.startedAt).Seconds()) < w.spec.InitialDelaySeconds {
		return true
	}
	// Liveness and readiness wait for the startup probe.
	if w.kind != Startup && !w.m.started(w.key) {
		return true
	}

	start := w.m.clk.Now()
	o, msg, err := w.attempt(ctx)
	took := w.m.clk.Since(start)
	if ctx.Err() != nil {
		// Stopped while probing: the attempt says nothing about the container.
		return false
	}
	if err != nil {
		// No verdict: reported, not counted.
		klog.FromContext(ctx).V(1).Info("Probe errored", "result", o, "err", err)
		w.m.event(w, ReasonUnhealthy, fmt.Sprintf("%s probe errored and resulted in %s state: %s", w.kind, o, err))
		return true
	}
	switch o {
	case outcomeWarning:
		w.m.event(w, ReasonProbeWarning, fmt.Sprintf("%s probe warning: %s", w.kind, msg))
	case outcomeFailure:
		klog.FromContext(ctx).V(1).Info("Probe failed", "output", msg)
		w.m.event(w, ReasonUnhealthy, fmt.Sprintf("%s probe failed: %s", w.kind, msg))
	}

	result := o.result()
	w.m.count(w, result, took)
	if result == w.lastResult {
		w.resultRun++
	} else {
		w.lastResult = result
		w.resultRun = 1
	}
	if (result == Failure && w.resultRun < int(w.spec.FailureThreshold)) ||
		(result == Success && w.resultRun < int(w.spec.SuccessThreshold)) {
		return true
	}
	w.m.record(w, result, msg)
	return !(w.kind == Liveness && result == Failure || w.kind == Startup)
}

// attempt runs the probe, again at once while it errors, up to maxAttempts times.
func (w *worker) attempt(ctx context.Context) (o outcome, msg string, err error) {
	for range maxAttempts {
		o, msg, err = runOnce(ctx, w.spec, w.target)
		if err == nil || ctx.Err() != nil {
			return o, msg, err
		}
	}
	return o, msg, err
}

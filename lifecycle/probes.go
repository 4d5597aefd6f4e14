package lifecycle

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle/probe"
)

// targetLocked is how probes and hooks reach instance id of c: httpGet and tcpSocket actions
// that name no host go to the pod's address as it is when they run, so that a target made
// before the address was known reaches it once it is.
func (p *Provider) targetLocked(st *podState, c *corev1.Container, id string) probe.Target {
	uid := st.pod.UID
	t := probe.Target{
		PodIP:        func() string { return p.podIP(uid) },
		Pod:          probe.FormatPod(st.pod.Name, st.pod.Namespace, st.pod.UID),
		PodNamespace: st.pod.Namespace,
		PodName:      st.pod.Name,
		Container:    c.Name,
		Ports:        c.Ports,
		Env:          c.Env,
		Exec: func(ctx context.Context, cmd []string) ([]byte, int, error) {
			return p.execCapture(ctx, id, cmd)
		},
		Warn: func(reason, message string) {
			p.cfg.Recorder.Event(st.pod, corev1.EventTypeWarning, reason, message)
		},
	}
	return t
}

// onProbe takes a probe's new result for a container instance.
func (p *Provider) onProbe(u probe.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[u.PodUID]
	if !ok {
		return
	}
	rec := st.containers[u.Container]
	if rec == nil || rec.current == nil || rec.current.ID != u.Instance {
		return // an instance that has been replaced
	}
	switch u.Kind {
	case probe.Startup:
		rec.started = u.Result == probe.Success
		rec.everStarted = rec.everStarted || (rec.started && rec.running())
		rec.unhealthy = rec.unhealthy || u.Result == probe.Failure
		c := containerSpec(st.pod, u.Container)
		rec.ready = rec.started && c != nil && c.ReadinessProbe == nil
	case probe.Liveness:
		rec.unhealthy = rec.unhealthy || u.Result == probe.Failure
	case probe.Readiness:
		rec.ready = rec.started && u.Result == probe.Success
	}
	p.kickLocked(u.PodUID)
}

// onProbeEvent records a probe attempt the kubelet reports as a Warning event (every failure).
func (p *Provider) onProbeEvent(e probe.Event) {
	p.mu.Lock()
	var pod *corev1.Pod
	if st, ok := p.pods[e.PodUID]; ok {
		pod = st.pod
	}
	p.mu.Unlock()
	if pod != nil {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, e.Reason, e.Message)
	}
}

// probeGrace is a liveness or startup probe's own terminationGracePeriodSeconds, if set.
func probeGrace(c *corev1.Container, grace time.Duration) time.Duration {
	for _, pr := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
		if pr != nil && pr.TerminationGracePeriodSeconds != nil {
			return time.Duration(*pr.TerminationGracePeriodSeconds) * time.Second
		}
	}
	return grace
}

// probeRestoredLocked starts the probes of the running containers restore found; Run calls it,
// so that they run with Run's context.
func (p *Provider) probeRestoredLocked(ctx context.Context) {
	for uid, st := range p.pods {
		for name, rec := range st.containers {
			if rec.running() && rec.exited != nil {
				c := containerSpec(st.pod, name)
				p.probes.Add(ctx, uid, c, rec.current.ID, rec.current.StartedAt, p.targetLocked(st, c, rec.current.ID))
			}
		}
	}
}

// ProbeMetrics are the kubelet's prober metrics of the pods' probes (prober_probe_total and
// prober_probe_duration_seconds, package probe's Metrics), which the kubelet API serves on
// /metrics/probes rather than with the lifecycle's own metrics (Config.Registerer), as the
// kubelet does.
func (p *Provider) ProbeMetrics() prometheus.Collector { return p.probeMetrics }

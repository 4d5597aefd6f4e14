package probe

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// The API server's defaults for a probe's numbers. A probe read from a file may not have been
// defaulted; the agent applies them where a field is zero, as the API server would have.
const (
	defaultTimeoutSeconds   = 1
	defaultPeriodSeconds    = 10
	defaultSuccessThreshold = 1
	defaultFailureThreshold = 3
)

// withDefaults returns a copy of p with its zero numbers defaulted.
func withDefaults(p *corev1.Probe) *corev1.Probe {
	c := p.DeepCopy()
	if c.TimeoutSeconds <= 0 {
		c.TimeoutSeconds = defaultTimeoutSeconds
	}
	if c.PeriodSeconds <= 0 {
		c.PeriodSeconds = defaultPeriodSeconds
	}
	if c.SuccessThreshold <= 0 {
		c.SuccessThreshold = defaultSuccessThreshold
	}
	if c.FailureThreshold <= 0 {
		c.FailureThreshold = defaultFailureThreshold
	}
	return c
}

// Run runs probe p's action once against t, bounded by the probe's timeoutSeconds (1 when
// unset), and returns its verdict and message, as one attempt of the kubelet's prober:
//
//   - exec: the command, with $(VAR) expanded from t.Env's static values, run through t.Exec;
//     exit 0 passes; output kept to 10 KiB; a timeout fails ("command timed out: ...").
//   - httpGet: 200–399 passes (a 3xx is a redirect to another host, which is not followed:
//     a pass the Manager reports as a ProbeWarning event); other codes, refused connections and
//     timeouts fail.
//   - tcpSocket: a connection that opens passes.
//   - grpc: grpc.health.v1.Health/Check on the pod's address and the action's port, asking about
//     its service ("" when unset); SERVING passes, any other answer, an error (refused, not a
//     health server) or the timeout — which bounds the whole call, connecting included — fails.
//
// A non-nil error means no verdict could be had (a port name the container does not declare, a
// command the runtime could not run, no exec support, no address): the Result is then Unknown. The
// kubelet reports such errors and then counts nothing; Manager does the same.
func Run(ctx context.Context, p *corev1.Probe, t Target) (Result, string, error) {
	if p == nil {
		return Unknown, "", fmt.Errorf("probe: %w: no probe", ErrNoHandler)
	}
	o, msg, err := runOnce(ctx, withDefaults(p), t)
	if err != nil {
		return Unknown, msg, err
	}
	return o.result(), msg, nil
}

// runOnce is one attempt of a defaulted probe.
func runOnce(ctx context.Context, p *corev1.Probe, t Target) (outcome, string, error) {
	logger := klog.FromContext(ctx)
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	switch {
	case p.Exec != nil:
		cmd := expandStatic(p.Exec.Command, t.Env)
		logger.V(4).Info("Exec probe", "command", cmd, "timeout", timeout)
		return execProbe(ctx, cmd, timeout, t)
	case p.HTTPGet != nil:
		req, err := newHTTPRequest(ctx, p.HTTPGet, t, "probe")
		if err != nil {
			return outcomeUnknown, "", fmt.Errorf("HTTP probe: %w", err)
		}
		logger.V(4).Info("HTTP probe", "url", req.URL.Redacted(), "timeout", timeout)
		return httpProbe(req, timeout)
	case p.TCPSocket != nil:
		port, err := resolvePort(p.TCPSocket.Port, t.Ports)
		if err != nil {
			return outcomeUnknown, "", fmt.Errorf("TCP probe: %w", err)
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = t.host()
		}
		if host == "" {
			return outcomeUnknown, "", fmt.Errorf("TCP probe: %w", ErrNoHost)
		}
		logger.V(4).Info("TCP probe", "host", host, "port", port, "timeout", timeout)
		return tcpProbe(ctx, host, port, timeout)
	case p.GRPC != nil:
		// The kubelet dials the pod's IP: the action has no host field.
		host := t.host()
		if host == "" {
			return outcomeUnknown, "", fmt.Errorf("gRPC probe: %w", ErrNoHost)
		}
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		logger.V(4).Info("gRPC probe", "host", host, "port", p.GRPC.Port, "service", service, "timeout", timeout)
		return grpcProbe(ctx, host, int(p.GRPC.Port), service, timeout)
	default:
		return outcomeUnknown, "", fmt.Errorf("probe: %w: it names no action", ErrNoHandler)
	}
}

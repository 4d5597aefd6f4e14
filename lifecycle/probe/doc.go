// Package probe runs containers' liveness, readiness and startup probes and their postStart and
// preStop hooks the way the kubelet does (its prober, pkg/probe and lifecycle handler runner),
// for any runtime: a Target says how to reach one running container instance — its address, its
// ports, and how to run a command in it.
//
// Run runs one probe attempt and RunHook one hook. Manager schedules the probes of running
// instances and reports their verdicts:
//
//	m := probe.NewManager(clock.RealClock{}, func(u probe.Update) {
//		// Liveness or Startup Failure: restart the instance. Any change: recompute
//		// m.Started / m.Ready for the container status.
//	}, probe.WithEvents(recordWarningEvent))
//	defer m.Close()
//	m.Add(ctx, pod.UID, &pod.Spec.Containers[i], containerID, startedAt, probe.Target{Host: podIP, Exec: execIn(containerID)})
//	...
//	m.RemoveInstance(pod.UID, name, containerID) // it exited
//
// Timing, as the kubelet's workers: a worker per instance and kind probes at once and then every
// periodSeconds; a worker added within one period of the Manager's start (the agent restarted
// and found the container running) first waits a random part of the period. Nothing is probed
// before initialDelaySeconds since the container started, and liveness and readiness wait until
// the startup probe has passed. A verdict needs successThreshold passes or failureThreshold
// failures in a row; zero numbers take the API server's defaults (timeout 1s, period 10s,
// thresholds 1 and 3). Before its first verdict an instance is not ready, alive, and not known
// to have started. A liveness Failure ends its worker (the caller restarts the instance, which
// is a new instance to Add), and so does a startup verdict either way. StopLivenessAndStartup is
// for a pod being killed: readiness keeps being probed during the grace period, as the kubelet.
//
// Actions, as the kubelet's: exec, httpGet, tcpSocket and grpc (grpc.health.v1.Health/Check on
// the pod's address, plaintext; SERVING passes, anything else fails — see Run).
//
// Errors: an attempt that gets no answer from the container (a port name it does not declare,
// a command the runtime could not start, no address to reach it at) is tried three times, then
// reported as an Unhealthy event and not counted, exactly as the kubelet throws such results
// away; the events say why, every period.
//
// After an agent restart, WithPriorStatus carries over the started and ready the API server
// holds for an instance that was already running, as the kubelet does.
//
// Metrics: with WithMetrics the Manager counts every attempt that reaches a verdict in the
// kubelet's prober_probe_total and times the passing ones in prober_probe_duration_seconds
// (Metrics, a prometheus.Collector, which the kubelet serves on /metrics/probes); the pod and
// namespace labels come from Target.PodNamespace and Target.PodName.
package probe

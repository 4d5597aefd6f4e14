package api

import (
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider"
)

// Routes are the kubelet's read and stream routes, served from the agent's pod manager and its
// provider. Optional provider capabilities (logs, stats) are looked up per request with
// provider.Capability, so a provider without one answers 501 naming it instead of failing to start
// — except on the Prometheus routes that scrape every kubelet, /metrics/cadvisor (the Summary as
// cAdvisor's series, [Routes.cadvisorMetrics]) and /metrics/probes (ProbeMetricsSource), which
// serve what the provider has, nothing at worst, so that a scrape never fails for want of a
// capability.
type Routes struct {
	// Pods is the agent's pod manager: what is bound here, and how a name the API server knows
	// (a mirror's) reaches the pod the provider runs.
	Pods podmanager.Manager
	// Provider runs the pods.
	Provider provider.PodLifecycleHandler
	// Node is the Node as the agent registers it (its provider has completed it): /metrics/cadvisor's
	// machine_cpu_cores and machine_memory_bytes are its capacity, labelled with its nodeInfo's
	// machine ID, system UUID and boot ID, as cAdvisor's. Nil: no machine metrics. Only read.
	Node *corev1.Node
	// StreamIdleTimeout closes an exec, attach or port-forward connection that has carried
	// nothing for that long (Config.StreamingConnectionIdleTimeout, the kubelet's
	// --streaming-connection-idle-timeout); 0 is DefaultStreamingConnectionIdleTimeout,
	// negative is never.
	StreamIdleTimeout time.Duration
}

// streamIdleTimeout is StreamIdleTimeout as cri-streaming takes it (0 is no timeout there).
func (rt Routes) streamIdleTimeout() time.Duration {
	switch {
	case rt.StreamIdleTimeout == 0:
		return DefaultStreamingConnectionIdleTimeout
	case rt.StreamIdleTimeout < 0:
		return 0
	}
	return rt.StreamIdleTimeout
}

// Mux is where routes are registered: a *Server (behind its authentication and authorization)
// or, in tests, an *http.ServeMux.
type Mux interface {
	Handle(pattern string, h http.Handler)
}

// Register adds the routes to m with the kubelet's paths. Methods are part of the patterns, so
// other methods get 405 as from the kubelet.
func (rt Routes) Register(m Mux) {
	m.Handle("GET /pods", http.HandlerFunc(rt.pods))
	m.Handle("GET /runningpods/{$}", http.HandlerFunc(rt.runningPods)) // that path only, as the kubelet
	m.Handle("GET /containerLogs/{namespace}/{pod}/{container}", http.HandlerFunc(rt.containerLogs))
	m.Handle("GET /stats/summary", http.HandlerFunc(rt.statsSummary))
	// exec, attach and portForward are GET (WebSocket) or POST (SPDY), as the API server sends them.
	for _, method := range []string{"GET", "POST"} {
		m.Handle(method+" /exec/{namespace}/{pod}/{container}", http.HandlerFunc(rt.exec))
		m.Handle(method+" /exec/{namespace}/{pod}/{uid}/{container}", http.HandlerFunc(rt.exec))
		m.Handle(method+" /attach/{namespace}/{pod}/{container}", http.HandlerFunc(rt.attach))
		m.Handle(method+" /attach/{namespace}/{pod}/{uid}/{container}", http.HandlerFunc(rt.attach))
		m.Handle(method+" /portForward/{namespace}/{pod}", http.HandlerFunc(rt.portForward))
		m.Handle(method+" /portForward/{namespace}/{pod}/{uid}", http.HandlerFunc(rt.portForward))
	}
	m.Handle("GET /metrics/resource", http.HandlerFunc(rt.resourceMetrics))
	m.Handle("GET /metrics/cadvisor", http.HandlerFunc(rt.cadvisorMetrics))
	m.Handle("GET /metrics/probes", rt.probeMetrics(processStart(time.Now())))
}

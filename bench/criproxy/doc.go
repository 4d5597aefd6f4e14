// Package criproxy times every CRI call an agent makes: a gRPC proxy on a unix socket of its
// own in front of the container runtime's, forwarding each call unchanged (raw bytes, any
// service and method, streams included) and recording how long each unary call took, by
// method. cri-50 puts the same proxy in front of containerd for vk-static, the kubelet and
// the CRI floor alike, so their per-call latencies are measured by one instrument and the
// proxy's own cost (a copy of each message, one more hop on a unix socket) is the same for
// all three.
//
// Contract: Start listens on the socket given and dials the runtime's; Calls returns what
// was recorded since the last Reset (or Start), by method name ("RunPodSandbox",
// "ImageStatus", …; the service is left out as no CRI method name is in both services).
// Server-streaming methods (GetContainerEvents) are forwarded but not timed: their length
// is the subscriber's, not the runtime's. Close stops the proxy and cuts its calls.
//
// Smallest use:
//
//	p, err := criproxy.Start("/tmp/x/proxy.sock", containerdSocket)
//	defer p.Close()
//	// agent started with --container-runtime-endpoint unix:///tmp/x/proxy.sock
//	p.Reset()
//	…
//	calls := p.Calls() // map["RunPodSandbox"]{Durations, MaxInFlight}
package criproxy

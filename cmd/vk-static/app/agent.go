package app

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/internal/nodecert"
	"github.com/vk-static/vk-static/internal/version"
	"github.com/vk-static/vk-static/kubeclient"
)

// runAgent turns the options into an agent.Config and runs the agent (with the kubelet API
// unless none is served: see kubeletAPI), with the parts that belong to the process rather than
// to the agent: the soft memory limit and the healthz endpoint. It returns when ctx is cancelled and everything has stopped, or when a part fails.
func runAgent(ctx context.Context, o *options) error {
	logger := klog.FromContext(ctx)
	registry := prometheus.NewRegistry()
	if err := os.MkdirAll(o.RootDir, 0o750); err != nil {
		return fmt.Errorf("--root-dir: %w", err)
	}
	cfg, beside, err := agentConfig(ctx, o, registry)
	if err != nil {
		return err
	}
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	if _, why := o.kubeletAPI(); why != "" {
		logger.Info("Not serving the kubelet API", "reason", why)
		if o.Profiling {
			// Not on the healthz port instead: anyone who reaches it would get the profiles.
			logger.Info("Warning: --profiling serves /debug/pprof on the kubelet API only, and there is none: not serving it", "reason", why)
		}
	}
	o.warnReadableHeaderFiles(logger)
	components := append([]agent.Component{a}, beside...)
	if limiter := applyMemoryLimit(o, logger); limiter != nil {
		components = append(components, limiter)
	}
	if o.HealthzPort > 0 {
		components = append(components, &healthzServer{
			addr:     net.JoinHostPort(o.HealthzBindAddress, strconv.Itoa(int(o.HealthzPort))),
			registry: registry,
			ready:    a.Ready(),
			runtime:  runtimeHealth(a.Provider()),
		})
	}
	logger.Info("vk-static", startupValues(o)...)
	return agent.RunAll(ctx, components...)
}

// agentConfig is the agent the options describe, its metrics registered with registry, and
// what must run beside it (the certificate managers).
func agentConfig(ctx context.Context, o *options, registry prometheus.Registerer) (agent.Config, []agent.Component, error) {
	var none []agent.Component
	nodeName, err := o.nodeName()
	if err != nil {
		return agent.Config{}, none, err
	}
	nodeIP := o.NodeIP
	if nodeIP == "" {
		nodeIP = defaultNodeIP()
	}
	taints, err := o.taints()
	if err != nil {
		return agent.Config{}, none, err
	}
	header, err := o.manifestHeader()
	if err != nil {
		return agent.Config{}, none, err
	}
	n := agent.NewNode(nodeName, nodeIP, o.NodeLabels)
	n.Spec.Taints = taints
	cfg := agent.Config{
		NodeName:                  nodeName,
		PodManifestPath:           o.PodManifestPath,
		FileCheckFrequency:        o.FileCheckFrequency,
		ManifestURL:               o.ManifestURL,
		ManifestURLHeader:         header,
		HTTPCheckFrequency:        o.HTTPCheckFrequency,
		Node:                      n,
		NodeStatusUpdateFrequency: o.NodeStatusUpdateFrequency,
		NodeStatusReportFrequency: o.NodeStatusReportFrequency,
		NodeLeaseDurationSeconds:  o.NodeLeaseDurationSeconds,
		NodeStatusMaxImages:       &o.NodeStatusMaxImages,
		PodSyncWorkers:            o.PodSyncWorkers,
		SyncFrequency:             o.SyncFrequency,
		Registerer:                registry,
		NewProvider:               providers[o.Provider](ctx, o),
	}
	cfg.API, _ = o.kubeletAPI()
	var certManagers []agent.Component // run beside the agent
	if o.Kubeconfig != "" {
		base, clientCerts, err := nodeCredentials(ctx, o, nodeName)
		if err != nil {
			return agent.Config{}, none, err
		}
		if clientCerts != nil {
			certManagers = append(certManagers, managerComponent{clientCerts})
		}
		if cfg.Client, err = newClient(base, o.KubeAPIQPS, o.KubeAPIBurst); err != nil {
			return agent.Config{}, none, err
		}
		// Events get their own rate limit, as with the kubelet's --event-qps: they must never
		// use up the budget of status writes.
		if cfg.EventClient, err = newClient(base, o.EventQPS, o.EventBurst); err != nil {
			return agent.Config{}, none, err
		}
		// The Lease and the Node's status without a client-side rate limit, as the kubelet's
		// heartbeat client; the kubelet API's reviews with one of their own (--kube-api-qps),
		// as a flood of made-up tokens must not starve the pods' status writes either.
		if cfg.HeartbeatClient, err = newClient(base, -1, 0); err != nil {
			return agent.Config{}, none, err
		}
		if cfg.ReviewClient, err = newClient(base, o.KubeAPIQPS, o.KubeAPIBurst); err != nil {
			return agent.Config{}, none, err
		}
		if o.RotateServerCertificates && cfg.API != nil {
			serving, err := nodecert.NewServingManager(ctx, cfg.Client.CertificateSigningRequests(), o.certDir(), nodeName, servingHosts(nodeName, n))
			if err != nil {
				return agent.Config{}, none, err
			}
			cfg.API.ServingCertificate = serving.Current
			certManagers = append(certManagers, managerComponent{serving})
		}
	}
	return cfg, certManagers, nil
}

// startupValues are the start-up line's key/value pairs: what a person reading the log needs to
// know the agent is the one they meant to start — its version, mode (standalone, or the API
// server it talks to), provider, and where it serves the kubelet API.
func startupValues(o *options) []any {
	mode := "standalone"
	if o.Kubeconfig != "" {
		mode = "API server " + apiServerURL(o)
	}
	kubeletAPI := "none: " // followed by why
	if _, why := o.kubeletAPI(); why != "" {
		kubeletAPI += why
	} else {
		kubeletAPI = "https://" + net.JoinHostPort(o.listenAddress(), strconv.Itoa(int(o.Port)))
	}
	return []any{"version", version.Version, "mode", mode, "provider", providerSummary(o), "kubeletAPI", kubeletAPI}
}

// apiServerURL is the API server the kubeconfig names ("?" if it cannot be read; building the
// client has said why by then).
func apiServerURL(o *options) string {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return "?"
	}
	return cfg.Host
}

// newClient is a client of base (the node's credentials) with its own rate limit, in protobuf.
func newClient(base *rest.Config, qps float32, burst int32) (kubeclient.Interface, error) {
	cfg := rest.CopyConfig(base)
	cfg.QPS, cfg.Burst = qps, int(burst)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.UserAgent = "vk-static/" + version.Version
	return kubeclient.New(cfg)
}

// defaultNodeIP is the first non-loopback address of the hostname, else of any interface, as
// the kubelet picks one; tests and single-host setups pass --node-ip.
func defaultNodeIP() string {
	if h, err := os.Hostname(); err == nil {
		if ips, err := net.LookupIP(h); err == nil {
			for _, ip := range ips {
				if !ip.IsLoopback() && ip.To4() != nil {
					return ip.String()
				}
			}
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && ipnet.IP.To4() != nil {
				return ipnet.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/sources"
)

// Agent is an assembled node agent. Run it once.
type Agent struct {
	cfg        Config
	components []Component
	pods       *node.PodController
	problems   *node.NodeProblemReporter
	api        *api.Server // nil when not served

	ready chan struct{} // closed by Run once every part that can be waited for is ready
	done  chan struct{}
	mu    sync.Mutex
	err   error
}

// Component is one of the parts RunAll starts and waits for: Run returns once ctx is cancelled
// and everything it started has stopped, or when it fails.
type Component interface {
	Run(ctx context.Context) error
}

// New validates cfg and builds the agent: sources, merger, pod manager, pod controller, the
// kubelet API server when configured and, with a Client, the Node watch, mirror client, events
// and the node controller. Nothing runs until Run, which must then be called (the pod
// controller's work queues start with New).
func New(cfg Config) (*Agent, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.EventClient == nil {
		cfg.EventClient = cfg.Client
	}
	a := &Agent{cfg: cfg, ready: make(chan struct{}), done: make(chan struct{})}
	standalone := cfg.Client == nil

	// The Node watch feeds the mirror client (owner references need the live Node UID) and
	// requeues mirrors when the Node appears, is re-created or starts being deleted.
	var nodes *nodeWatch
	var nodeGetter mirror.NodeGetter
	var mirrors mirror.Client
	if !standalone {
		nodes = newNodeWatch(cfg.Client, cfg.NodeName)
		nodeGetter = nodes
		mirrors = mirror.NewBasicMirrorClient(cfg.Client, cfg.NodeName, nodeGetter)
		a.components = append(a.components, nodes)
	}
	pods := podmanager.NewBasicPodManager(mirrors)
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry() // registered nowhere anyone scrapes
	}
	metrics := node.NewMetrics(cfg.Registerer, pods)

	var recorder record.EventRecorder
	if !standalone {
		events := node.NewEventRecorder(cfg.EventClient.CoreV1(),
			corev1.EventSource{Component: "vk-static", Host: cfg.NodeName}, node.EventRecorderOptions{Metrics: metrics})
		recorder = events
		a.components = append(a.components, events)
		if u, ok := cfg.Provider.(EventRecorderUser); ok {
			u.UseEventRecorder(recorder)
		}
	}
	// Its logger is Run's, set before anything can report.
	a.problems = &node.NodeProblemReporter{NodeName: cfg.NodeName, Recorder: recorder, Metrics: metrics}

	mux, err := a.sources(a.problems)
	if err != nil {
		return nil, err
	}
	desired := a.desiredNode()
	if cfg.API != nil {
		if a.api, err = a.apiServer(desired); err != nil {
			return nil, err
		}
		// The kubelet's routes, from the pods bound here and the provider running them.
		api.Routes{Pods: pods, Provider: cfg.Provider, StreamIdleTimeout: cfg.API.StreamingConnectionIdleTimeout}.Register(a.api)
		a.components = append(a.components, a.api)
	}
	var nodeController *node.NodeController
	if !standalone {
		if nodeController, err = a.nodeController(desired, nodes); err != nil {
			return nil, err
		}
	}
	// Last, once nothing can fail: the pod controller's work queues run from here on, and only
	// its Run stops them.
	a.pods, err = node.NewPodController(node.PodControllerConfig{
		NodeName:      cfg.NodeName,
		Provider:      cfg.Provider,
		Pods:          pods,
		Updates:       mux.Updates(),
		Client:        cfg.Client,
		Node:          nodeGetter,
		Recorder:      recorder,
		Workers:       cfg.PodSyncWorkers,
		SyncFrequency: cfg.SyncFrequency,
		Metrics:       metrics,
	})
	if err != nil {
		return nil, err
	}
	a.components = append(a.components, muxComponent{mux}, a.pods)
	if !standalone {
		nodes.notify(a.pods.RequeueMirrors)
		a.components = append(a.components, nodeController)
	}
	return a, nil
}

// sources configures the file, URL and API sources the config asks for, and the caller's own.
func (a *Agent) sources(problems sources.ProblemReporter) (*sources.Mux, error) {
	cfg := a.cfg
	var srcs []sources.Source
	if cfg.PodManifestPath != "" {
		s, err := sources.NewFileSource(sources.FileConfig{
			Path: cfg.PodManifestPath, NodeName: cfg.NodeName, CheckFrequency: cfg.FileCheckFrequency, Problems: problems,
		})
		if err != nil {
			return nil, fmt.Errorf("manifest path: %w", err)
		}
		srcs = append(srcs, s)
	}
	if cfg.ManifestURL != "" {
		s, err := sources.NewHTTPSource(sources.HTTPConfig{
			URL: cfg.ManifestURL, Header: cfg.ManifestURLHeader, NodeName: cfg.NodeName, CheckFrequency: cfg.HTTPCheckFrequency, Problems: problems,
		})
		if err != nil {
			return nil, fmt.Errorf("manifest URL: %w", err)
		}
		srcs = append(srcs, s)
	}
	if cfg.Client != nil {
		srcs = append(srcs, sources.NewAPISource(cfg.Client, cfg.NodeName))
	}
	srcs = append(srcs, cfg.Sources...)
	return sources.NewMux(problems, srcs...), nil
}

// desiredNode is the Node the agent is: the configured one, completed by the provider, with the
// kubelet API's port when it serves one.
func (a *Agent) desiredNode() *corev1.Node {
	cfg := a.cfg
	n := cfg.Node
	if n == nil {
		n = NewNode(cfg.NodeName, "", nil)
	} else {
		n = n.DeepCopy()
	}
	n.Name = cfg.NodeName
	if c, ok := cfg.Provider.(NodeConfigurer); ok {
		c.ConfigureNode(n)
	}
	if cfg.API != nil {
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(cfg.API.Port) //nolint:gosec // validated to be a port
	}
	return n
}

// apiServer is the kubelet API server for the Node n: it authorizes against the node's name,
// asks the API server with the agent's client, and a self-signed certificate is for the
// Node's addresses.
func (a *Agent) apiServer(n *corev1.Node) (*api.Server, error) {
	c := *a.cfg.API
	c.NodeName = a.cfg.NodeName
	if c.Client == nil {
		c.Client = a.cfg.Client
	}
	c.Hosts = append([]string(nil), c.Hosts...)
	for _, addr := range n.Status.Addresses {
		c.Hosts = append(c.Hosts, addr.Address)
	}
	return api.New(c)
}

// nodeController registers the Node n, renews its Lease and keeps its status fresh, reading
// the Node from the agent's watch of it rather than from the API server.
func (a *Agent) nodeController(n *corev1.Node, nodes *nodeWatch) (*node.NodeController, error) {
	cfg := a.cfg
	health, ok := cfg.Provider.(provider.NodeProvider)
	if !ok {
		health = alwaysHealthy{}
	}
	opts := []node.NodeControllerOpt{
		node.WithNodeEnableLeaseV1(cfg.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease), cfg.NodeLeaseDurationSeconds),
		node.WithNodeGetter(nodes),
	}
	if cfg.NodeStatusUpdateFrequency > 0 {
		opts = append(opts, node.WithNodeStatusUpdateInterval(cfg.NodeStatusUpdateFrequency))
	}
	if cfg.NodeStatusReportFrequency > 0 {
		opts = append(opts, node.WithNodeStatusReportFrequency(cfg.NodeStatusReportFrequency))
	}
	if cfg.NodeStatusMaxImages != nil {
		opts = append(opts, node.WithNodeStatusMaxImages(*cfg.NodeStatusMaxImages))
	}
	return node.NewNodeController(health, n, cfg.Client.CoreV1().Nodes(), opts...)
}

// Ready is closed once the pod controller has adopted the provider's pods and runs, and the
// kubelet API, when served, listens.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// waitReady closes a.ready once its parts are ready, or returns when ctx ends.
func (a *Agent) waitReady(ctx context.Context) error {
	parts := []<-chan struct{}{a.pods.Ready()}
	if a.api != nil {
		parts = append(parts, a.api.Ready())
	}
	for _, ready := range parts {
		select {
		case <-ready:
		case <-ctx.Done():
			return nil
		}
	}
	close(a.ready)
	return nil
}

// API is the kubelet API server (nil when Config.API is nil): routes are added to it with Handle
// before Run, and its Ready says when it listens.
func (a *Agent) API() *api.Server { return a.api }

// Done is closed when Run has returned.
func (a *Agent) Done() <-chan struct{} { return a.done }

// Err is the error Run returned, once Done is closed.
func (a *Agent) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Run runs every part until ctx is cancelled or one of them fails (which stops the others), and
// returns after all have stopped.
func (a *Agent) Run(ctx context.Context) (err error) {
	defer func() {
		a.mu.Lock()
		a.err = err
		a.mu.Unlock()
		close(a.done)
	}()
	logger := klog.FromContext(ctx)
	a.problems.Logger = logger
	logger.Info("Starting the agent", "node", a.cfg.NodeName, "standalone", a.cfg.Client == nil,
		"manifestPath", a.cfg.PodManifestPath, "manifestURL", a.cfg.ManifestURL != "")
	return RunAll(ctx, append(a.components, componentFunc(a.waitReady))...)
}

// componentFunc is a function as a Component.
type componentFunc func(ctx context.Context) error

// Run calls f.
func (f componentFunc) Run(ctx context.Context) error { return f(ctx) }

// RunAll runs every component until ctx is cancelled or one of them fails, and returns after all
// have stopped, with every failure joined.
func RunAll(ctx context.Context, components ...Component) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(components))
	for i, c := range components {
		wg.Go(func() {
			errs[i] = c.Run(ctx)
			if errs[i] != nil {
				cancel() // one failed: stop the others
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// muxComponent adapts sources.Mux, whose Run cannot fail, to Component.
type muxComponent struct{ *sources.Mux }

func (m muxComponent) Run(ctx context.Context) error {
	m.Mux.Run(ctx)
	return nil
}

// alwaysHealthy is the NodeProvider of a provider that reports no node health of its own.
type alwaysHealthy struct{}

func (alwaysHealthy) Ping(context.Context) error                           { return nil }
func (alwaysHealthy) NotifyNodeStatus(context.Context, func(*corev1.Node)) {}

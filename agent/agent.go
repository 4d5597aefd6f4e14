package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/runresult"
	"github.com/vk-static/vk-static/mirror"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/podmanager"
	"github.com/vk-static/vk-static/provider"
	"github.com/vk-static/vk-static/sources"
)

// Agent is an assembled node agent. Building one starts nothing; Run it once.
type Agent struct {
	cfg        Config
	components []Component // run by Run beside the pod controller
	provider   Provider
	podManager podmanager.Manager
	mirrors    mirror.Client // nil standalone
	metrics    *node.Metrics
	recorder   record.EventRecorder // nil standalone
	// statusBacklog holds events back behind the pod controller's status writes; nil standalone.
	statusBacklog *node.StatusBacklog
	nodes         *nodeWatch // nil standalone
	mux           *sources.Mux
	problems      *node.NodeProblemReporter
	api           *api.Server // nil when not served

	ready chan struct{} // closed by Run once every part that can be waited for is ready
	ended runresult.Result
}

// Component is one of the parts RunAll starts and waits for: Run returns once ctx is cancelled
// and everything it started has stopped, or when it fails.
type Component interface {
	Run(ctx context.Context) error
}

// New validates cfg and builds the agent: sources, merger, pod manager, the provider (its
// factory, Config.NewProvider, completes the Node), the kubelet API server when configured and,
// with a Client, the Node watch, mirror client, events and the node controller. It starts
// nothing: Run does, the pod controller and the provider's own work included. The agent closes
// the provider it built (when an io.Closer), once: New if it fails after building it, else Run
// once every part has stopped.
func New(cfg Config) (_ *Agent, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.EventClient == nil {
		cfg.EventClient = cfg.Client
	}
	if cfg.HeartbeatClient == nil {
		cfg.HeartbeatClient = cfg.Client
	}
	if cfg.ReviewClient == nil {
		cfg.ReviewClient = cfg.Client
	}
	if cfg.Registerer == nil {
		cfg.Registerer = prometheus.NewRegistry() // registered nowhere anyone scrapes
	}
	a := &Agent{cfg: cfg, ready: make(chan struct{})}
	standalone := cfg.Client == nil

	// The Node watch feeds the mirror client (owner references need the live Node UID) and
	// requeues mirrors when the Node appears, is re-created or starts being deleted.
	if !standalone {
		a.nodes = newNodeWatch(cfg.Client, cfg.NodeName)
		a.mirrors = mirror.NewBasicMirrorClient(cfg.Client, cfg.NodeName, a.nodes)
		a.components = append(a.components, a.nodes)
	}
	a.podManager = podmanager.NewBasicPodManager()
	a.metrics = node.NewMetrics(cfg.Registerer, a.podManager)
	if !standalone {
		a.statusBacklog = node.NewStatusBacklog(0, nil)
		events := node.NewEventRecorder(cfg.EventClient,
			corev1.EventSource{Component: "vk-static", Host: cfg.NodeName},
			node.EventRecorderOptions{Metrics: a.metrics, Backlog: a.statusBacklog})
		a.recorder = events
		a.components = append(a.components, events)
	}
	// Its logger is Run's, set before anything can report.
	a.problems = &node.NodeProblemReporter{NodeName: cfg.NodeName, Recorder: a.recorder, Metrics: a.metrics}

	if a.mux, err = a.sources(a.problems); err != nil {
		return nil, err
	}
	desired := a.configuredNode()
	if a.provider, err = a.newProvider(desired, a.recorder); err != nil {
		return nil, err
	}
	if a.provider == nil {
		return nil, errors.New("agent: Config.NewProvider returned no provider")
	}
	defer func() {
		if err != nil {
			_ = a.closeProvider() // New's error says what went wrong
		}
	}()
	if cfg.API != nil {
		// The Node advertises the kubelet API's port.
		desired.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(cfg.API.Port) //nolint:gosec // validated to be a port
		if a.api, err = a.apiServer(desired); err != nil {
			return nil, err
		}
		// The kubelet's routes, from the pods bound here, the provider running them and, for
		// the machine metrics, the Node as registered.
		api.Routes{Pods: a.podManager, Provider: a.provider, Node: desired.DeepCopy(),
			StreamIdleTimeout: cfg.API.StreamingConnectionIdleTimeout}.Register(a.api)
		a.components = append(a.components, a.api)
	}
	a.components = append(a.components, muxComponent{a.mux})
	if work, ok := a.provider.(Component); ok {
		a.components = append(a.components, work)
	}
	if !standalone {
		nodeController, err := a.nodeController(desired, a.nodes)
		if err != nil {
			return nil, err
		}
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

// configuredNode is the Node the agent is, as configured: the provider completes it.
func (a *Agent) configuredNode() *corev1.Node {
	n := a.cfg.Node
	if n == nil {
		n = NewNode(a.cfg.NodeName, "", nil)
	} else {
		n = n.DeepCopy()
	}
	n.Name = a.cfg.NodeName
	return n
}

// apiServer is the kubelet API server for the Node n: it authorizes against the node's name,
// asks the API server with the agent's client, and a self-signed certificate is for the
// Node's addresses.
func (a *Agent) apiServer(n *corev1.Node) (*api.Server, error) {
	c := *a.cfg.API
	c.NodeName = a.cfg.NodeName
	if a.cfg.ReviewClient != nil && c.TokenReviews == nil && c.SubjectAccessReviews == nil {
		c.TokenReviews = a.cfg.ReviewClient.TokenReviews()
		c.SubjectAccessReviews = a.cfg.ReviewClient.SubjectAccessReviews()
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
	health, ok := a.provider.(provider.NodeProvider)
	if !ok {
		health = alwaysHealthy{}
	}
	opts := []node.NodeControllerOpt{
		node.WithNodeEnableLeaseV1(cfg.HeartbeatClient.Leases(corev1.NamespaceNodeLease), cfg.NodeLeaseDurationSeconds),
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
	return node.NewNodeController(health, n, cfg.HeartbeatClient.Nodes(), opts...)
}

// Ready is closed once the pod controller has adopted the provider's pods and runs, and the
// kubelet API, when served, listens.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

// waitReady closes a.ready once the pod controller pods and the other parts are ready, or
// returns when ctx ends.
func (a *Agent) waitReady(ctx context.Context, pods *node.PodController) error {
	parts := []<-chan struct{}{pods.Ready()}
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

// Provider is the provider Config.NewProvider built.
func (a *Agent) Provider() Provider { return a.provider }

// Done is closed when Run has returned.
func (a *Agent) Done() <-chan struct{} { return a.ended.Done() }

// Err is the error Run returned, once Done is closed.
func (a *Agent) Err() error { return a.ended.Err() }

// Run runs every part until ctx is cancelled or one of them fails (which stops the others), and
// returns after all have stopped, having then closed the provider (when an io.Closer; its
// error is joined to Run's).
func (a *Agent) Run(ctx context.Context) (err error) {
	defer func() { a.ended.Finish(err) }()
	logger := klog.FromContext(ctx)
	a.problems.Logger = logger
	logger.Info("Starting the agent", "node", a.cfg.NodeName, "standalone", a.cfg.Client == nil,
		"manifestPath", a.cfg.PodManifestPath, "manifestURL", a.cfg.ManifestURL != "")
	// Made here, as its work queues start goroutines as they are made, which only its Run
	// stops.
	var nodeGetter mirror.NodeGetter
	if a.nodes != nil {
		nodeGetter = a.nodes
	}
	pods, err := node.NewPodController(node.PodControllerConfig{
		NodeName:      a.cfg.NodeName,
		Provider:      a.provider,
		Pods:          a.podManager,
		Updates:       a.mux.Updates(),
		Client:        a.cfg.Client,
		Mirrors:       a.mirrors,
		Node:          nodeGetter,
		Recorder:      a.recorder,
		StatusBacklog: a.statusBacklog,
		Workers:       a.cfg.PodSyncWorkers,
		SyncFrequency: a.cfg.SyncFrequency,
		Metrics:       a.metrics,
	})
	if err != nil {
		_ = a.closeProvider() // never run; err says what went wrong
		return err
	}
	if a.nodes != nil {
		a.nodes.notify(pods.RequeueMirrors)
	}
	waitReady := componentFunc(func(ctx context.Context) error { return a.waitReady(ctx, pods) })
	err = RunAll(ctx, append(a.components, pods, waitReady)...)
	// Only now that every part has stopped — the pod controller and the kubelet API (exec,
	// logs, port-forward) call into the provider until then — does it give back what it holds.
	return errors.Join(err, a.closeProvider())
}

// closeProvider closes the provider New built when it is an io.Closer: once, when no part of
// the agent uses it any more (Run's end) or will (New's and Run's errors before anything ran).
func (a *Agent) closeProvider() error {
	if c, ok := a.provider.(io.Closer); ok {
		return c.Close()
	}
	return nil
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

package lifecycle

import (
	"context"
	"errors"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/agent"
)

// NewProvider is the agent's provider factory (agent.Config.NewProvider) for the lifecycle on
// cfg.Runtime: it completes cfg with what the agent gives every provider — the node's IPs (unless
// cfg names them), its config map, secret, Service, token and RuntimeClass getters, the event
// recorder and the metrics registry — builds the provider (New, with ctx) and fills in the
// Node's nodeInfo (ConfigureNode). cfg holds the rest: the runtime, its name, RootDir and the
// policies. The agent runs the provider (Run) with its other parts, and cfg.RuntimeWork beside
// it. cfg.Runtime is the provider's once the factory is called (New): the provider's Close
// closes it, or New if it fails; the agent, which called the factory, closes the provider
// (io.Closer) once: after every part of its Run has stopped, or on its own error paths.
func NewProvider(ctx context.Context, cfg Config) agent.NewProviderFunc {
	return func(pc agent.ProviderConfig) (agent.Provider, error) {
		if len(cfg.NodeIPs) == 0 {
			cfg.NodeIPs = pc.NodeIPs
		}
		cfg.Objects, cfg.Tokens, cfg.RuntimeClasses = pc.Objects, pc.Tokens, pc.RuntimeClasses
		if pc.Services != nil { // not a nil *ServiceWatch in a non-nil interface
			cfg.Services = pc.Services
		}
		cfg.Recorder, cfg.Registerer = pc.Recorder, pc.Registerer
		if pc.Node != nil && cfg.NodeName == "" {
			cfg.NodeName = pc.Node.Name
		}
		if pc.Node != nil && cfg.Node == nil {
			cfg.Node = currentNode(pc)
		}
		p, err := New(ctx, cfg)
		if err != nil {
			return nil, err
		}
		p.ConfigureNode(pc.Node)
		if len(cfg.RuntimeWork) == 0 {
			return p, nil
		}
		return &withRuntimeWork{Provider: p, work: cfg.RuntimeWork}, nil
	}
}

// withRuntimeWork is the provider with its runtime's own work (Config.RuntimeWork) run beside it.
type withRuntimeWork struct {
	*Provider
	work []agent.Component

	mu      sync.Mutex
	closed  bool
	stop    context.CancelFunc // ends a Run under way; nil when none is
	stopped chan struct{}      // closed when that Run returns
}

// Run runs the provider and the runtime's work until ctx ends or one of them fails, and returns
// once neither uses the runtime any more. It leaves the provider, and so its runtime, to Close.
func (p *withRuntimeWork) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errors.New("lifecycle: Run after Close")
	}
	if p.stop != nil {
		p.mu.Unlock()
		return errors.New("lifecycle: Run twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan struct{})
	defer close(stopped)
	p.stop, p.stopped = cancel, stopped
	p.mu.Unlock()
	return agent.RunAll(ctx, append([]agent.Component{p.Provider}, p.work...)...)
}

// Close stops a Run under way and waits for it — the runtime's work uses the runtime too — then
// closes the provider (Provider.Close): once, whatever the number of calls.
func (p *withRuntimeWork) Close() error {
	p.mu.Lock()
	p.closed = true
	stop, stopped := p.stop, p.stopped
	p.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	return p.Provider.Close()
}

// currentNode is the Node pods are admitted on: as the API server holds it now, else (before
// the agent's watch has it, or standalone) as the agent registers it, the kubelet's cached Node
// and initial Node. The registered Node is copied as it is now, complete: the agent changes its
// own afterwards.
func currentNode(pc agent.ProviderConfig) func() *corev1.Node {
	registered := pc.Node.DeepCopy()
	return func() *corev1.Node {
		if pc.CurrentNode != nil {
			if n := pc.CurrentNode(); n != nil {
				return n
			}
		}
		return registered
	}
}

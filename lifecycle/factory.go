package lifecycle

import (
	"context"
	"errors"

	"github.com/vk-static/vk-static/agent"
)

// NewProvider is the agent's provider factory (agent.Config.NewProvider) for the lifecycle on
// cfg.Runtime: it completes cfg with what the agent gives every provider — the node's IPs (unless
// cfg names them), its config map, secret, Service and token getters, the event recorder and
// the metrics registry — builds the provider (New, with ctx) and fills in the Node's nodeInfo
// (ConfigureNode). cfg holds the rest: the runtime, its name, RootDir and the policies. The agent
// runs the provider (Run) with its other parts, and cfg.RuntimeWork beside it. cfg.Runtime is
// the provider's once the factory is called (New): the provider closes it, or New if it fails;
// the agent closes a provider it built and will not run (io.Closer).
func NewProvider(ctx context.Context, cfg Config) agent.NewProviderFunc {
	return func(pc agent.ProviderConfig) (agent.Provider, error) {
		if len(cfg.NodeIPs) == 0 {
			cfg.NodeIPs = pc.NodeIPs
		}
		cfg.Objects, cfg.Tokens = pc.Objects, pc.Tokens
		if pc.Services != nil { // not a nil *ServiceWatch in a non-nil interface
			cfg.Services = pc.Services
		}
		cfg.Recorder, cfg.Registerer = pc.Recorder, pc.Registerer
		if pc.Node != nil && cfg.NodeName == "" {
			cfg.NodeName = pc.Node.Name
		}
		p, err := New(ctx, cfg)
		if err != nil {
			return nil, err
		}
		p.ConfigureNode(pc.Node)
		if len(cfg.RuntimeWork) == 0 {
			return p, nil
		}
		return withRuntimeWork{p, cfg.RuntimeWork}, nil
	}
}

// withRuntimeWork is the provider with its runtime's own work (Config.RuntimeWork) run beside it.
type withRuntimeWork struct {
	*Provider
	work []agent.Component
}

// Run runs the provider and the runtime's work until ctx ends or one of them fails, then closes
// the provider (and so its runtime) once neither uses the runtime any more.
func (p withRuntimeWork) Run(ctx context.Context) error {
	err := agent.RunAll(ctx, append([]agent.Component{runFunc(p.run)}, p.work...)...)
	return errors.Join(err, p.Close())
}

// runFunc is a function as an agent.Component.
type runFunc func(ctx context.Context) error

// Run calls f.
func (f runFunc) Run(ctx context.Context) error { return f(ctx) }

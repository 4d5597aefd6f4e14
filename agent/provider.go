package agent

import (
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/vk-static/vk-static/nodeobjects"
	"github.com/vk-static/vk-static/provider"
)

// Provider runs the agent's pods: a provider.PodLifecycleHandler, with whichever of package
// provider's optional interfaces it implements (PodNotifier to push status instead of being
// polled, NodeProvider for the node's health, NodeImageLister, the kubelet API's capabilities).
// A provider with work of its own (watching its runtime, garbage collection) also implements
// Component: the agent runs it from Run, beside its other parts, until Run's context ends.
// A provider that holds what it must give back (a connection to its runtime) also implements
// io.Closer, and leaves that to Close, not to its Run's end: the agent closes it once, when
// Run has stopped every part (the pod controller and the kubelet API call the provider until
// then), or when New or Run fails before running it.
type Provider interface {
	provider.PodLifecycleHandler
}

// NewProviderFunc builds the agent's provider from what the agent gives it; New calls it once,
// before the Node is registered. virtual-kubelet's nodeutil.NewProviderFunc is the model.
type NewProviderFunc func(ProviderConfig) (Provider, error)

// ProviderConfig is what the agent gives its provider: everything node-scoped, read with the
// node's own identity. The getters are nil without a Client (standalone: static pods cannot use
// config maps, secrets, Services or service account tokens, and every sandbox has the runtime's
// default handler).
type ProviderConfig struct {
	NodeName string
	// Node is the Node the agent registers, which the provider completes in place before
	// returning: capacity, allocatable, node info, addresses, a taint that keeps real workloads
	// off a simulator.
	Node *corev1.Node
	// NodeIPs are the Node's InternalIP addresses, as Config.Node gives them.
	NodeIPs []string
	// CurrentNode is the Node as the API server holds it now, from the agent's watch: the
	// labels and taints an administrator set, the allocatable the agent reported. It returns
	// nil while the watch does not have it, and always standalone (nil CurrentNode then).
	CurrentNode func() *corev1.Node

	// Objects reads the config maps and secrets API pods use.
	Objects nodeobjects.ObjectGetter
	// Services watches the cluster's Services, for the pods' service environment variables;
	// constructing it started nothing: a provider that uses it runs it (its Run) from its own.
	Services *nodeobjects.ServiceWatch
	// Tokens requests the service account tokens of API pods' projected volumes.
	Tokens nodeobjects.TokenRequester
	// RuntimeClasses reads the RuntimeClass a pod names (spec.runtimeClassName), whose handler
	// its sandbox runs with.
	RuntimeClasses nodeobjects.RuntimeClassGetter

	// Recorder posts events about the pods (Killing, BackOff, Unhealthy, FailedMount); never
	// nil: standalone, where there are no events, it drops them.
	Recorder record.EventRecorder
	// Registerer receives the provider's metrics with the agent's (Config.Registerer).
	Registerer prometheus.Registerer
}

// newProvider calls cfg.NewProvider with the ProviderConfig of the Node n, which the provider
// completes, and the recorder (nil standalone).
func (a *Agent) newProvider(n *corev1.Node, recorder record.EventRecorder) (Provider, error) {
	cfg := a.cfg
	pc := ProviderConfig{NodeName: cfg.NodeName, Node: n, Recorder: recorder, Registerer: cfg.Registerer}
	if pc.Recorder == nil {
		pc.Recorder = &record.FakeRecorder{} // drops events: no channel
	}
	for _, addr := range n.Status.Addresses {
		if addr.Type == corev1.NodeInternalIP {
			pc.NodeIPs = append(pc.NodeIPs, addr.Address)
		}
	}
	if a.nodes != nil {
		pc.CurrentNode = func() *corev1.Node {
			n, err := a.nodes.Get(cfg.NodeName)
			if err != nil {
				return nil
			}
			return n
		}
	}
	if cfg.Client != nil {
		pc.Objects = nodeobjects.NewClientGetter(cfg.Client)
		pc.Services = nodeobjects.NewServiceWatch(cfg.Client)
		pc.Tokens = nodeobjects.NewClientTokenRequester(cfg.Client)
		pc.RuntimeClasses = nodeobjects.NewClientRuntimeClassGetter(cfg.Client)
	}
	return cfg.NewProvider(pc)
}

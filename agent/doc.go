// Package agent assembles a whole node agent from the other packages: sources (a manifest
// directory, a manifest URL, the API server, and any of the caller's own) → merger → pod manager
// → pod controller → provider, with mirror pods, the Node watch that mirrors depend on, events,
// node registration, lease and status, and (Config.API) the kubelet HTTP API of node/api, whose
// port the Node advertises. It is what cmd/vk-static runs, and what a library
// user runs with a provider of their own (virtual-kubelet's nodeutil.NewNode is the model).
//
// It holds no logic of its own beyond wiring: everything it builds is documented in its own
// package. Without a Client it runs standalone: static pods only, no Node, no mirrors.
//
// The provider is built by a factory (Config.NewProvider) from what the agent gives it
// (ProviderConfig: the Node to complete, the node's IPs, config map, secret, Service and token
// getters, the event recorder, the metrics registry); New calls it and starts nothing, and Run
// runs every part — the provider's own work too, when it has any (a Run method) — until its
// context ends. Whoever builds a thing closes it, once: the agent closes the provider it built
// (an io.Closer) after Run has stopped every part that calls it, or when New or Run fails
// before running it. lifecycle.NewProvider is the factory of the lifecycle on a
// lifecycle.Runtime.
//
// The smallest agent with mirrors, given a client (kubeclient.New) carrying the node's own identity
// (system:node:<name>; nothing more is needed):
//
//	a, err := agent.New(agent.Config{
//		NodeName:        "edge-1",
//		NewProvider:     newMyProvider, // func(agent.ProviderConfig) (agent.Provider, error)
//		Client:          client,
//		PodManifestPath: "/etc/kubernetes/manifests",
//	})
//	if err != nil { ... }
//	err = a.Run(ctx) // until ctx is cancelled
package agent

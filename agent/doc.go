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
// The smallest agent with mirrors, given a clientset carrying the node's own identity
// (system:node:<name>; nothing more is needed):
//
//	a, err := agent.New(agent.Config{
//		NodeName:        "edge-1",
//		Provider:        myProvider, // a provider.PodLifecycleHandler
//		Client:          clientset,
//		PodManifestPath: "/etc/kubernetes/manifests",
//	})
//	if err != nil { ... }
//	err = a.Run(ctx) // until ctx is cancelled
package agent

// Package node runs pods on a provider and keeps the API server informed.
//
// A provider implements PodLifecycleHandler (and, ideally, PodNotifier and NodeProvider).
// PodController is the lifecycle loop: it consumes the merged updates from sources/, keeps the
// podmanager.Manager current, calls the provider, reconciles mirror pods and writes status.
// NodeController registers the Node, renews its Lease and reports its status.
//
// Provider errors are classified with IsNotFound and IsInvalidInput through any wrapping:
//
//	return node.NotFound("pod %s/%s", ns, name)
package node

// Package provider is the contract between the agent and whatever runs its pods: the interfaces
// a provider implements and the kinds of error it returns. It imports nothing but the API types,
// so that a provider (provider/mock, the lifecycle layer) depends on this contract and not on
// the controllers that call it (node, node/api), as virtual-kubelet's errdefs and the kubelet's
// CRI split keep the runtime apart from the kubelet.
//
// A provider implements PodLifecycleHandler (and, ideally, PodNotifier and NodeProvider). What
// the kubelet HTTP API serves beyond that are optional capabilities, one interface each:
// [ContainerLogsHandler] (kubectl logs), [ContainerExecHandler] (exec), [ContainerAttachHandler]
// (attach), [PortForwardHandler] (port-forward) and [StatsSummaryHandler] (the Summary API and
// /metrics/resource, hence kubectl top). [Capability] finds one, or returns an error
// [IsNotImplemented] recognises, which the API answers with 501.
//
// Errors are classified by kind, through any amount of %w wrapping: [NotFound] (the
// pod or container does not exist: deleting it is done, not retried) and [InvalidInput] (the
// request can never be served as asked: retrying will not help). Anything else is the
// provider's failure and is retried.
package provider

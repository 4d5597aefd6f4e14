// Package node runs pods on a provider and keeps the API server informed.
//
// Providers implement the contract in package provider (PodLifecycleHandler and its optional
// capabilities); this package is the side that calls them.
//
// PodController is the pod sync loop. It applies the merged updates from sources/ to its
// DesiredPods and reconciles each pod full name — one worker at a time per name — from
// three facts: the desired pod, the pod the provider runs, and the mirror pod. Its guarantees:
//
//   - a pod is created in the provider once per UID; an API pod's spec, label or annotation
//     change is UpdatePod, compared with what the provider was given (never with API defaults);
//   - one pod per full name runs at a time: an edited static pod starts only after the old
//     one has terminated, and rapid edits coalesce to the newest;
//   - a provider pod found at start-up (an agent restart) is stopped only once its source's
//     first snapshot has been applied (PodUpdate.SourceSeen), never before — and not at all
//     while its manifest file still exists but does not decode (PodUpdate.Unreadable);
//   - API pods are deleted gracefully: DeletePod, a terminal status (or the grace period), then
//     delete with grace 0 and a UID precondition; a removed static pod is stopped with its
//     terminationGracePeriodSeconds, and its mirror deleted afterwards;
//   - mirror pods are decided by mirror.Decide after every static-pod sync and every mirror
//     event, once the API source has been seen;
//   - status is written coalesced per pod, only when it changed, as a patch to the status
//     subresource of the API pod or the static pod's current mirror, with accurate condition
//     transition times and one Started event per container;
//   - it is level-triggered: events make it fast, never correct. Every full name is synced
//     again each SyncFrequency (jittered; no API call when nothing differs), an API answer the
//     watch contradicts (a 404 for a mirror it still holds, AlreadyExists for one it lacks) is
//     retried with back-off rather than taken as final, and a refusal (the provider's invalid
//     input, the API server's Forbidden or Invalid) is reported once and tried again on the
//     resync.
//
// DesiredPods is the few methods of podmanager.Manager the controller calls, and PodLister the
// one Metrics reads. They are declared here so that the controller depends on no more of the
// pod manager than it uses; podmanager.NewBasicPodManager is both.
//
// NodeController registers the Node, renews its Lease and reports its status as the kubelet
// does: computed against the Node a watch holds (WithNodeGetter), written when it changes and
// otherwise once a report period (WithNodeStatusReportFrequency); a provider that is a
// provider.NodeImageLister has its images listed every status update interval, apart from the
// status writes, as the kubelet's status.images (WithNodeStatusMaxImages). EventRecorder
// posts events with several workers and counts what it must drop; given a StatusBacklog that
// the PodController reports to, it holds events back, for two seconds at most, while pod status
// writes are queued or in flight. Metrics are Prometheus
// metrics; a nil *Metrics records nothing.
//
// A whole agent — sources, mirrors, the Node watch they need, events, node registration — is
// assembled by package agent (agent.New); its example runs a provider of one's own with mirrors.
// The smallest agent built from this package alone (standalone: no API server, no mirrors):
//
//	mux := sources.NewMux(nil, files)
//	pc, err := node.NewPodController(node.PodControllerConfig{
//		NodeName: "n1", Provider: p, Pods: podmanager.NewBasicPodManager(), Updates: mux.Updates(),
//	})
//	go mux.Run(ctx)
//	err = pc.Run(ctx)
//
// Provider errors are classified with IsNotFound and IsInvalidInput through any wrapping (the
// capabilities use them too: NotFound for an unknown pod or container, InvalidInput for a request
// that can never be served as asked):
//
//	return provider.NotFound("pod %s/%s", ns, name)
package node

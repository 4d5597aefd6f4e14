// Package floor is the least work any node agent can do for the bench's API scenarios, so
// vk-static's numbers have a floor beside them measured on the same control plane and load.
//
// Contract: with a node identity (system:node:<name>) the floor registers a minimal Ready
// Node (NodeRestriction lets a node create only its own), runs one pod informer with
// spec.nodeName=<name>, patches each new pod's status to Running once (phase Running, the
// Initialized, ContainersReady and Ready conditions, a running status per container — what
// the bench's Running check and ready latency read) and deletes each terminating pod with one
// DELETE (grace 0, UID precondition). With a manifest directory (Agent.ManifestDir, the
// static-1k scenario) it also reads each manifest file that appears once and creates its
// mirror pod (named <name>-<node>, the mirror annotation, owned by the Node, as
// NodeRestriction requires), which the informer then patches Running, and deletes the mirror
// (grace 0) when the file goes. Nothing else: no lease, no node-status updates, no events, no
// runtime, no edits of manifests, no retries beyond the informer's next event.
//
// [CRIAgent] is the same floor for cri-50, where pods run on a CRI runtime: for each
// manifest, with no bound on how many at once, RunPodSandbox, CreateContainer and
// StartContainer beside the mirror's create, then one status patch (Running, the container
// IDs); for each manifest removed, the mirror's DELETE, StopPodSandbox and RemovePodSandbox.
//
// Smallest use (what bench/cmd/floor does):
//
//	a := &floor.Agent{Client: nodeClient, Node: "node-a"}
//	err := a.Run(ctx) // returns when ctx is cancelled; a.Ready() once the informer synced
package floor

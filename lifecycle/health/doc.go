// Package health is the kubelet's runtime state in small: whether the container runtime can run
// pods, and so whether the Node is Ready.
//
// A Monitor asks a Checker (a backend's Status, CRI's RuntimeService.Status) every Period, as
// the kubelet's updateRuntimeUp does every 5 s, and keeps what the kubelet's runtimeState keeps:
// the time of the last status that said RuntimeReady, the runtime's error (RuntimeReady false)
// and the network's (NetworkReady false). From those it computes the Node's Ready condition
// with the kubelet's reasons and messages (nodestatus.ReadyCondition):
//
//   - before the first status: False, "container runtime status check may not have completed yet";
//   - no RuntimeReady status for longer than Threshold (a Status that fails, or no answer): False,
//     "container runtime is down" — the kubelet's maxWaitForContainerRuntime, 30 s;
//   - RuntimeReady false: False at once, "container runtime not ready: RuntimeReady=false reason:… message:…";
//   - NetworkReady false: False at once, "container runtime network not ready: NetworkReady=false …";
//   - otherwise True, KubeletReady.
//
// Config.NotReady adds another part of the node's reasons (the node shutdown manager's "node
// is shutting down"), joined after the runtime's as the kubelet joins them.
//
// Several errors are joined as the kubelet joins them ("[a, b]"). The Monitor is a
// provider.NodeProvider: its Ping never fails, so the Lease is renewed as long as the agent lives
// (the cluster reads liveness from the Lease, schedulability from Ready), and it reports the
// Ready condition through NotifyNodeStatus whenever it changes. Err is the condition's message;
// RuntimeErr leaves the network out, as the kubelet's sync loop (and so its healthz) waits for
// the runtime only: that is what /healthz and /readyz report. Nothing here touches a container: recovery only turns the Node Ready again.
//
// Smallest use:
//
//	m := health.NewMonitor(health.Config{Checker: runtime})
//	go m.Run(ctx)
//	nodeController, _ := node.NewNodeController(m, n, nodes)
package health

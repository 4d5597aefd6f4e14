// Package mock is an instant, concurrency-safe pod provider for tests and scale benchmarks.
//
// It implements provider.PodLifecycleHandler, provider.PodNotifier and provider.NodeProvider, and every
// optional capability of the kubelet API (below), without running anything: CreatePod reports the pod Running at once (every pod condition True, one running
// ContainerStatus per container, podIP/hostIP from Config), DeletePod reports a terminal status
// (every container Terminated with exit code 0, reason Completed, phase Succeeded) through
// NotifyPods and forgets the pod, so a later GetPod returns a provider.NotFound error.
//
// Pods are keyed by namespace/name and keep the UID they were given (a static pod keeps its
// static UID). Every operation is O(1) under one mutex; GetPods is the only full scan.
//
// A pod is kept as the simulator runs it, not as it was given: GetPod and GetPods report its
// name, namespace, UID, annotations and deletion fields (what restart adoption needs, as
// provider.PodLifecycleHandler says), the spec fields the simulator reads (node name, hostname,
// restart policy, grace period; each container's name, image, ports, env, requests and restart
// policy) and its status. Labels and the rest of the spec are dropped at CreatePod and UpdatePod,
// as the kubelet's /runningpods/ reports only what its runtime knows of a pod.
//
// # Background work
//
// NotifyPods starts the provider's only goroutine, which stops with the context given to
// NotifyPods. It delivers status changes (coalesced per pod: a slow callback only ever sees the
// newest status of each pod) and runs delayed transitions (create-delay, delete-delay,
// run-duration) on Config.Clock, so tests drive them with a fake clock. Without NotifyPods the
// delayed transitions do not happen.
//
// # Behaviour annotations
//
// A pod chooses simulated behaviour with annotations (durations in time.ParseDuration syntax):
//
//	mock.vk-static.io/create-delay: 500ms      Pending (ContainerCreating) this long, then Running
//	mock.vk-static.io/create-error: "boom"     CreatePod fails with this message (a transient error)
//	mock.vk-static.io/create-error-times: "2"  ... only for the first N CreatePod calls of the UID
//	mock.vk-static.io/create-invalid: "why"    CreatePod fails with provider.InvalidInput (do not retry)
//	mock.vk-static.io/delete-delay: 2s         containers keep running this long after DeletePod,
//	                                           capped at the deletion grace period; "grace" waits
//	                                           for the whole grace period (a slow shutdown)
//	mock.vk-static.io/delete-error: "boom"     DeletePod fails with this message
//	mock.vk-static.io/exit-code: "3"           the exit code containers end with (default 0);
//	                                           non-zero makes the terminal phase Failed
//	mock.vk-static.io/run-duration: 1s         restartPolicy Never (or OnFailure with exit code 0)
//	                                           pods finish on their own after this long
//
// # The node
//
// As a provider.NodeProvider it reports a Ready node with the capacity in Config, and ConfigureNode
// (which fills the Node a NodeController registers) taints it
// virtual-kubelet.io/provider=mock:NoSchedule, as virtual-kubelet taints its nodes with the
// provider's name, alongside any taints the caller set. The simulator runs nothing, so the
// scheduler and DaemonSets must not place real workloads on its node; pods bound with
// spec.nodeName and static pods are not scheduled, so the taint does not keep them off.
// Its Ping and status reports are an embedded NodeProvider, which a test of the node
// controller alone uses by itself.
//
// # Logs, exec, attach, port-forward and stats
//
// The capabilities the kubelet API serves (provider.ContainerLogsHandler, ContainerExecHandler,
// ContainerAttachHandler, PortForwardHandler, StatsSummaryHandler) are simulated honestly: what
// they report is what the simulator did, and nothing pretends a program ran.
//
//   - Logs: a container's log is its lifecycle, one line per event, timed by Config.Clock:
//     "mock: created container app (image nginx:1)", "started", "stopping (pod deleted, grace
//     period 30s)", "stopped: exit code 0 (Completed)"; a restart (UpdatePod with a new image)
//     ends the instance with "stopped ... to restart it with image nginx:2" and starts a new one
//     with "restarted container app (restart 1, image nginx:2)". The current and the previous
//     instance are kept (opts.Previous), at most five lines each. Tail, LimitBytes,
//     SinceSeconds/SinceTime and Timestamps are applied as the kubelet applies them; Follow
//     streams new lines until the container terminates or the context ends. The log goes with
//     its pod: once DeletePod has forgotten it, its logs are NotFound.
//   - Exec runs a built-in command in a running container: "echo ARGS..." (stdout), "cat" (stdin
//     to stdout until stdin ends; killed, exit code 137, if the container stops), "env" (the
//     container's env vars with literal values, as written in the spec: no valueFrom, no $(VAR)
//     expansion), "hostname" (spec.hostname, else the pod's name). Any other command writes
//     "<cmd>: command not found" to stderr and exits 127 (a k8s.io/utils/exec.CodeExitError).
//     Names are matched without a directory (/bin/echo is echo).
//   - Attach: the simulated process has no output; attach says so in one line (stderr, or the
//     terminal) and echoes stdin to stdout until stdin ends, the container stops or the context
//     ends.
//   - Port-forward echoes what it receives until the client closes its side or the context ends,
//     on a TCP port one of the pod's containers declares; any other port is refused
//     (provider.InvalidInput), since a real pod listens only where its program does.
//   - Stats are derived from the specs, so they are deterministic: a running container uses
//     exactly its CPU and memory requests (10m and 16Mi, DefaultContainerCPU and
//     DefaultContainerMemory, when it requests none), its cumulative CPU time grows at that rate on
//     Config.Clock since it started (or restarted), and pods and the node are the sums. The
//     Summary lists the pods with a running container, sorted by namespace and name, with the UIDs
//     they were given.
//
// # Counters
//
// With Config.RecordCalls, Calls(uid) tells how often CreatePod, UpdatePod and DeletePod were
// called for a pod UID, for tests that assert, for example, that a recreated mirror pod caused
// no second CreatePod. The counters are kept for every UID for the provider's life, so they are
// off by default (the agent and the benchmarks run without them), and Calls panics when they
// are off rather than report zeros nothing counted. Len, the number of pods the provider runs,
// is always available.
//
// # Smallest use
//
//	p, err := mock.New(mock.Config{NodeName: "node-a", InternalIP: "127.0.0.1"})
//	p.NotifyPods(ctx, func(pod *corev1.Pod) { ... }) // starts the background goroutine
//	err = p.CreatePod(ctx, pod)
//	node := &corev1.Node{...}
//	p.ConfigureNode(node) // capacity, allocatable, conditions, addresses, taint for the NodeController
package mock

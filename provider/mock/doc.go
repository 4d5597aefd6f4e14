// Package mock is an instant, concurrency-safe pod provider for tests and scale benchmarks.
//
// It implements node.PodLifecycleHandler, node.PodNotifier and node.NodeProvider without running
// anything: CreatePod reports the pod Running at once (every pod condition True, one running
// ContainerStatus per container, podIP/hostIP from Config), DeletePod reports a terminal status
// (every container Terminated with exit code 0, reason Completed, phase Succeeded) through
// NotifyPods and forgets the pod, so a later GetPod returns a node.NotFound error.
//
// Pods are keyed by namespace/name and keep the UID they were given (a static pod keeps its
// static UID). Every operation is O(1) under one mutex; GetPods is the only full scan.
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
//	mock.vk-static.io/create-invalid: "why"    CreatePod fails with node.InvalidInput (do not retry)
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
// As a node.NodeProvider it reports a Ready node with the capacity in Config, and ConfigureNode
// (which fills the Node a NodeController registers) taints it
// virtual-kubelet.io/provider=mock:NoSchedule, as virtual-kubelet taints its nodes with the
// provider's name, alongside any taints the caller set. The simulator runs nothing, so the
// scheduler and DaemonSets must not place real workloads on its node; pods bound with
// spec.nodeName and static pods are not scheduled, so the taint does not keep them off.
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

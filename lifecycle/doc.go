// Package lifecycle runs pods' containers the way the kubelet does, on any Runtime: the
// kubelet's kuberuntime in small. Provider is a provider.PodLifecycleHandler and provider.PodNotifier
// with every optional capability (logs, exec, attach, port-forward, stats), built on a narrow
// Runtime interface that a backend implements (the whole contract, with the optional
// interfaces beside it, is in one file: runtime.go) — host processes
// (runtime/process) today, CRI next. The backend runs containers; the lifecycle decides
// everything else.
//
// Its guarantees:
//
//   - a worker per pod syncs it whenever a call, a container event (Runtime.NotifyContainers),
//     a probe result or a timer it set (a back-off ending, the active deadline, the volume
//     refresh) asks for it; nothing polls;
//   - what a sync does is decided by planPod from the pod's state alone: init containers one at
//     a time in order (a sidecar — a restartable init container — counts once started: running
//     and past its startup probe, as the kubelet), then every main container; exited containers
//     restarted as restartPolicy says, the first restart at once, then after 10 s doubling to
//     5 min from the exit, reset after 10 min running (CrashLoopBackOff); a failed liveness or
//     startup probe or postStart hook stops the container with its grace; sidecars stop once the
//     main containers have finished for good;
//   - status is built by podStatus from the same state, as the kubelet's generateAPIPodStatus:
//     container states with exit codes and reasons, restart counts, last states, the phase and
//     conditions; statuses reach NotifyPods in the order they were built, coalesced per pod;
//     a container without an instance waits with PodInitializing in a pod with init
//     containers, else ContainerCreating; the conditions it owns are the kubelet's generated
//     ones, with their reasons and messages (podstatus.Conditions), Ready waiting for every
//     readiness gate's condition as UpdatePod brings it; the conditions of others are never
//     reported;
//   - a pod's addresses are its sandbox's, none until the sandbox has them; only a pod on the
//     host's network (or on a runtime whose sandboxes report none: processes) has the node's.
//     The downward API (status.podIP, status.podIPs) and the httpGet and tcpSocket actions of
//     probes and hooks that name no host use the same addresses, the latter as they are when
//     the action runs; the sandbox's hostname is the kubelet's (hostnameOverride, hostname or
//     name, cut to 63 characters; hostname.<subdomain>.<namespace>.svc.<ClusterDomain> with
//     setHostnameAsFQDN), and on a Runtime with images every container gets the kubelet's
//     managed /etc/hosts;
//   - an exited container's termination message is the kubelet's: a
//     file bound at terminationMessagePath (RootDir/pods/<uid>/containers/<name>/<attempt>;
//     only on a Runtime with images, whose containers have a filesystem of their own), or with
//     FallbackToLogsOnError and a failed exit, the end of its log;
//   - DeletePod stops the main containers together (preStop, the stop signal, a kill at the
//     deadline), then sidecars in reverse order, reports the terminal status and forgets the
//     pod (containers, sandbox, volumes, logs) — only once the runtime confirms each removal
//     and nothing is mounted below the pod's directory: never a RemoveAll through a mount. Until
//     then the pod stays, terminating, with its record, reported (FailedCleanup event, log,
//     metrics) and tried again with back-off;
//   - a pod the kubelet's own admission refuses (spec.os, sysctls outside the safe set and
//     Config.AllowedUnsafeSysctls) or the Runtime refuses (Admit) is Failed as the
//     kubelet rejects a pod — its reason (PodOSNotSupported, SysctlForbidden, NotAdmitted for
//     the Runtime's), "Pod was rejected: <message>" — and never started;
//   - with Config.Eviction, a pod the eviction manager evicts is stopped with the
//     eviction's grace, its volumes removed, and is Failed once stopped, reason Evicted, with
//     the kubelet's message, a DisruptionTarget condition and a Warning event; it is never
//     started again, an agent restart included. Under disk pressure the containers and logs
//     of terminated pods are reclaimed first (and, on a Runtime that can, unused images);
//   - an API pod's containers are resized in place, as the kubelet's allocation
//     manager and kuberuntime do: a resize that fits beside the other pods is allocated (kept
//     in the pod's record) and applied to the running containers — through ResourceUpdater,
//     or by a restart where resizePolicy says RestartContainer — else PodResizePending,
//     Deferred (tried again) or Infeasible (a Runtime without ResourceUpdater); instances are
//     created with their allocation; statuses carry resources, allocatedResources,
//     PodResizeInProgress and the observedGeneration of the resize decided;
//   - ephemeral containers are started once each, in the pod's existing sandbox,
//     before and whatever the init containers do, as the kubelet's EphemeralContainersToStart;
//     never restarted nor killed before the pod stops; with a targetContainerName, given the
//     target's current instance (ContainerConfig.TargetContainerID) to share its process
//     namespace, and waiting with CreateContainerConfigError until the target has one. Their
//     status is status.ephemeralContainerStatuses, never ready, outside the phase and the
//     conditions. Only a Runtime that implements EphemeralRuntime runs them; on another, each
//     waits for good (EphemeralContainersNotSupported, naming spec.ephemeralContainers[i] and
//     the provider) and the pod runs on;
//   - a container's environment gets the kubelet's service variables (Config.Services,
//     the Services as the API server or the node's copy holds them); with runAsNonRoot and no runAsUser, a Runtime that knows its images'
//     users (ImageUserService) holds the container to its image's;
//   - the pods a previous agent ran are restored by New from RootDir/pods/<uid>/pod.json and the
//     Runtime's labelled containers: running containers keep running, with their restart counts
//     and start times; stopping the agent stops nothing unless Config.StopPodsOnExit. Records
//     are written with fsync (file and directory) before the rename; a record that cannot be
//     read keeps its pod's containers and sandbox as they are, reported, until the pod is
//     created again — they are never taken for a pod that is gone;
//   - an API pod's config maps, secrets, Services and tokens are kept in
//     RootDir/pods/<uid>/local-copy (package lifecycle/localcopy) and read while the
//     API server cannot be reached, so that after an agent restart or a reboot during an outage
//     it runs again with the data it had.
//
// # Pods, workers and the lock
//
// Each pod has one worker, a goroutine, and only the worker changes what runs for
// its pod: it creates the sandbox, starts, stops and removes the containers, and forgets the pod.
// So the runtime never sees two changes to one pod at once, and a pod's slow stop holds up no
// other pod. Everything else only asks the worker to sync again (a kick): the Provider's calls
// (CreatePod, UpdatePod, DeletePod, the evictions), the runtime's container events, the probes'
// results and the worker's own timers. Three exceptions act while no worker does: New, which
// restores the pods and removes the instances no pod owns before any worker starts; Run's end
// with Config.StopPodsOnExit, which stops every pod once the workers have ended; and the reclaim
// under disk pressure, which removes exited instances of terminated pods.
//
// One mutex, Provider.mu, guards what the lifecycle knows: the pods by UID and name, each pod's
// state and container records, and the workers. Its rules:
//
//   - it is held to read or record, never across a call to the Runtime, a volume's setup, a
//     probe, a hook or an image pull; a pod's record (pod.json, a few KB) is the one write made
//     under it, so that what a call acknowledged is on disk before the next call is answered;
//   - a method whose name ends in Locked expects it held; every other method takes it itself;
//   - after a runtime call, a worker takes it again and checks that the pod and the container's
//     instance are still the ones it read before it records the result: the pod may have been
//     deleted, or the instance replaced, meanwhile;
//   - it is taken before the probe manager's and the status queue's own locks, never after: the
//     probes report through a callback that takes it from the prober's goroutine, with none of
//     the probe manager's locks held.
//
// The environment and argv come from package lifecycle/env, volumes and mounts from
// lifecycle/volume, probes and hooks from lifecycle/probe, logs are read by package
// containerlog.
//
// The smallest use, with the process runtime (ExampleNewProvider: with a runtime of one's own);
// the agent gives the lifecycle its node-scoped parts and runs it (NewProvider):
//
//	rt, err := process.New(process.Config{StateDir: "/var/lib/vk-static/process"})
//	a, err := agent.New(agent.Config{
//		NodeName:        "n1",
//		PodManifestPath: "/etc/kubernetes/manifests",
//		NewProvider:     lifecycle.NewProvider(ctx, lifecycle.Config{Runtime: rt, RuntimeName: "process", RootDir: "/var/lib/vk-static"}),
//	})
//	err = a.Run(ctx) // the provider's workers and container events too; returns when ctx ends
//
// Whoever builds a thing closes it, once. The Runtime is the Provider's from the call to New
// on: New closes it if it fails, else Provider.Close does (an io.Closer: idempotent); nothing
// else does. Run does not close: whoever built the Provider closes it once nothing calls it any
// more — the agent after every part of its Run has stopped (its kubelet API and pod controller
// call the provider until then), or on its own errors; a Run after Close fails.
package lifecycle

// Package cri is a lifecycle.Runtime and lifecycle.ImageService over a CRI v1 container runtime
// (containerd, CRI-O), through a small client of its own with the kubelet's timeouts
// ([remoteRuntime]; k8s.io/cri-client links OpenTelemetry): what the kubelet's kuberuntime does
// below its pod workers, and nothing above. The lifecycle decides when to run, restart, probe and
// stop; this package maps its configs to CRI the way kuberuntime does and CRI's answers back.
//
//	rt, err := cri.New(ctx, cri.Config{RuntimeEndpoint: cri.DefaultEndpoint,
//		ImageGCHighThreshold: 85, ImageGCLowThreshold: 80, ImageMinimumGCAge: 2 * time.Minute,
//		LogMaxSize: 10 << 20, LogMaxFiles: 5})
//	p, err := lifecycle.New(ctx, lifecycle.Config{Runtime: rt, RuntimeName: rt.Name(), ...})
//	go p.Run(ctx)
//	go rt.ImageGC().Run(ctx)    // nil when the thresholds disable it
//	go rt.LogRotator().Run(ctx) // nil when LogMaxSize is 0
//
// The lifecycle owns rt from lifecycle.New on and closes its connections once, in its Close
// (an io.Closer), which its builder calls once nothing uses it (the agent: after Run, not at
// the provider's Run's end); lifecycle.NewProvider with Config.RuntimeWork runs ImageGC and
// LogRotator and closes rt only once they have stopped too.
//
// Sandboxes and containers carry the lifecycle's labels and LabelManaged; only those are
// listed, so the runtime's other clients' pods are never touched, and a restarted agent finds
// its own again.
//
// Mapping (kuberuntime's): a host-network sandbox has the node's network namespace and no
// hostname of its own (CRI runtimes refuse to set one without a UTS namespace); a pod-network
// sandbox gets the pod's hostname and spec.dnsConfig, and is admitted only while the runtime
// reports NetworkReady (Admit; without CNI a pod-network sandbox fails and leaks its network
// namespace). The pod IP is in SandboxStatus.IPs. Containers get the image ID the lifecycle
// pulled (the spec's image as user_specified_image), command and args as given (none: the
// image's entrypoint and cmd), env, working directory, bind mounts with the spec's
// mountPropagation, a log path relative to the sandbox's log directory, cpu shares and CFS
// quota and the memory limit from requests and limits, and the effective security context:
// capabilities, privileged (only with Config.AllowPrivileged, else Admit refuses),
// runAsUser/Group, readOnlyRootFilesystem, no_new_privs for allowPrivilegeEscalation false,
// seccomp (unset is Unconfined, as the kubelet without SeccompDefault; Localhost profiles are
// under Config.SeccompProfileRoot), AppArmor (unset: the runtime's default), and the kubelet's
// default masked and read-only /proc and /sys paths unless privileged or procMount Unmasked.
//
// Container events: containerd 1.6 has no CRI event stream, so NotifyContainers is the
// kubelet's generic relist (every second, states diffed). A runtime that stops answering
// changes nothing: the relist reports nothing until it answers, the client reconnects.
//
// Logs: the runtime writes each container's log (CRI format) at the lifecycle's LogPath;
// LogRotator is the kubelet's container log manager (rename, CRI ReopenContainerLog), with the
// rotated files named as package containerlog reads them.
//
// Exec, attach and port-forward ask CRI for a URL of the runtime's streaming server and speak
// SPDY to it with client-go; the agent's authenticated kubelet API stays in front.
//
// Images: ImageRef is CRI ImageStatus's ID; PullImage passes the pull secret's credential;
// ListImages is CRI ListImages, for the Node's status.images.
// ImageGC is the kubelet's image garbage collector: by the image filesystem's usage against
// its capacity, unused images least recently used first, never one a container uses, a
// pinned one, the sandbox image or one first seen less than Config.ImageMinimumGCAge ago (the
// kubelet's two minutes: at start every image is new). DeleteUnusedImages, the reclaim under
// disk pressure, keeps the same ones, by the same records.
package cri

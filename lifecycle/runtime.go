// The runtime contract, whole: [Runtime], which every backend implements; then the interfaces
// a backend implements for more than host processes (images, in-place resize, ephemeral
// containers, stats of a whole pod, ...), each asked for with a type assertion; then the
// values they pass. A runtime author needs no other file of this package.

package lifecycle

import (
	"context"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/lifecycle/health"
	"github.com/vk-static/vk-static/provider"
)

// Runtime is what a backend implements: it runs containers and reports on them, and decides
// nothing. Restarts, probes, hooks, grace periods, init order and the pod's status are the
// lifecycle's; a Runtime is told what to run and when to stop it, like a CRI runtime is by the
// kubelet's kuberuntime.
//
// Identifiers are the runtime's own; the lifecycle finds its containers again after an agent
// restart through ListContainers and the Labels it gave them. Every method may be called
// concurrently. Methods return an error that provider.IsNotFound recognises for an unknown sandbox or
// container.
type Runtime interface {
	// Admit checks, before anything is created, that this runtime may run pod as it is written,
	// and returns an error naming the field (and the flag that would allow it, if any) when it
	// may not: a user it must not run as, a feature it cannot provide. The lifecycle refuses such
	// a pod with the error's message and never calls the runtime for it again.
	Admit(pod *corev1.Pod) error

	// RunSandbox creates what a pod's containers share (for processes, a record of the pod; for
	// CRI, the pod sandbox) and returns its ID. Called once per pod UID unless RemoveSandbox was
	// called in between.
	RunSandbox(ctx context.Context, cfg *SandboxConfig) (string, error)
	// StopSandbox stops what the sandbox holds; its containers have all been stopped before.
	StopSandbox(ctx context.Context, sandboxID string) error
	// RemoveSandbox forgets a stopped sandbox; its containers have all been removed before.
	RemoveSandbox(ctx context.Context, sandboxID string) error
	// ListSandboxes returns every sandbox the runtime holds, including those created before the
	// agent restarted.
	ListSandboxes(ctx context.Context) ([]*SandboxStatus, error)

	// CreateContainer prepares a container in a sandbox without starting it.
	CreateContainer(ctx context.Context, sandboxID string, cfg *ContainerConfig) (string, error)
	// StartContainer starts a created container and returns once its process runs. A command
	// that cannot be started (no such executable, not executable, a mount that fails) is an
	// error, and the container is then Exited with Reason "StartError" and a Message saying why,
	// as with CRI.
	StartContainer(ctx context.Context, containerID string) error
	// StopContainer signals the container's processes with cfg's StopSignal (SIGTERM when
	// unset), then kills them when grace has passed, and returns once they have ended or ctx
	// ends. Stopping a container that is not running is not an error.
	StopContainer(ctx context.Context, containerID string, grace time.Duration) error
	// RemoveContainer forgets a container that is not running (its log file is the lifecycle's
	// and stays).
	RemoveContainer(ctx context.Context, containerID string) error
	// ContainerStatus reports one container.
	ContainerStatus(ctx context.Context, containerID string) (*ContainerStatus, error)
	// ListContainers reports every container the runtime holds, running or not, including those
	// created before the agent restarted.
	ListContainers(ctx context.Context) ([]*ContainerStatus, error)

	// NotifyContainers registers cb, called whenever a container started or exited — the
	// lifecycle's pod lifecycle events, so that nothing polls. It returns at once; cb may block
	// briefly and must not call back into the runtime synchronously. Events stop when ctx ends.
	// Once a container's Started event has come, its exit (or its loss) must come as an Exited
	// event: the lifecycle then stops asking for the status of a container it saw running.
	NotifyContainers(ctx context.Context, cb func(ContainerEvent))

	// Exec runs cmd in a running container (its environment, working directory, user and
	// mounts), with the streams of io, and blocks until the command ends. The exit code is
	// reported as provider.ContainerExecHandler describes (a k8s.io/utils/exec.ExitError).
	Exec(ctx context.Context, containerID string, cmd []string, io provider.AttachIO) error
	// Attach connects io to the stdio of the container's main process, as
	// provider.ContainerAttachHandler describes.
	Attach(ctx context.Context, containerID string, io provider.AttachIO) error
	// PortForward connects stream to TCP port of the sandbox's network, as
	// provider.PortForwardHandler describes.
	PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error
	// ContainerStats measures a running container: every process it started, together.
	ContainerStats(ctx context.Context, containerID string) (*ContainerStats, error)

	// Close gives back what the runtime holds (its connections to a CRI runtime, its
	// supervisors' watches); the containers keep running. A Runtime is the Provider's from the
	// call to New on, and only it closes the Runtime, once: New if it fails, else Provider.Close
	// (which Run's end calls). Nothing is called after Close.
	io.Closer
}

// ImageService is implemented by a Runtime that runs container images (CRI). The lifecycle
// then brings each container's image as its imagePullPolicy says before creating it, with the
// kubelet's pull back-off and reasons (ErrImagePull, ImagePullBackOff, ErrImageNeverPull); a
// Runtime without it runs host commands, and a container without a command cannot run there.
// Removing unused images is the runtime's own business (CRI: image garbage collection).
type ImageService interface {
	// ImageRef returns the runtime's ID for image when it is present, "" when it is not.
	ImageRef(ctx context.Context, image string) (string, error)
	// PullImage pulls image with auth (nil: anonymously) for the pod of sandbox and returns
	// the image's ID.
	PullImage(ctx context.Context, image string, auth *ImageAuth, sandbox *SandboxConfig) (string, error)
}

// ResourceUpdater is implemented by a Runtime that changes a running container's resources in
// place, as CRI's UpdateContainerResources (the process runtime: its cgroups). The lifecycle
// resizes pods on it without restarting their containers ([Provider.actuateResize]); on a Runtime
// without it, a resize is Infeasible.
type ResourceUpdater interface {
	// UpdateContainerResources gives the running container containerID the resources of c,
	// and its pod the limits of pod (its cgroup, where the runtime has one per pod): pod is
	// the pod with every container's resources as the node has allocated them, c one of its
	// containers.
	UpdateContainerResources(ctx context.Context, containerID string, pod *corev1.Pod, c *corev1.Container) error
}

// EphemeralRuntime is implemented by a Runtime that can run ephemeral containers in a pod's
// existing sandbox. On a Runtime without it, an ephemeral container waits for good with a
// message naming spec.ephemeralContainers and the runtime, and the rest of the pod runs on:
// refusing the whole pod would stop a running one, since the containers arrive by UpdatePod.
type EphemeralRuntime interface {
	// AdmitEphemeral reports whether c, the ephemeral container at field (e.g.
	// "spec.ephemeralContainers[0]"), can run in pod; its error names the field.
	AdmitEphemeral(pod *corev1.Pod, c *corev1.EphemeralContainer, field string) error
}

// ImageFsDir is implemented by a Runtime with an image filesystem of its own (CRI
// ImageFsInfo): a directory on it, measured for the imagefs eviction signals.
type ImageFsDir interface {
	ImageFsDir(ctx context.Context) (string, error)
}

// ImageReclaimer is implemented by a Runtime with images (CRI): DeleteUnusedImages removes
// every image no container uses, the kubelet's reclaim of an image filesystem under pressure.
type ImageReclaimer interface {
	DeleteUnusedImages(ctx context.Context) error
}

// LimitEnforcer is a Runtime that says whether it enforces a pod's resource limits (the
// process runtime does with cgroups, when it can use them). A Runtime that does not implement it
// is taken to enforce them, as a CRI runtime does.
type LimitEnforcer interface {
	// EnforcesLimits reports whether limits are enforced, and if not why.
	EnforcesLimits() (bool, string)
}

// ImageLister is implemented by a Runtime that keeps container images (CRI ListImages): the
// Node's status.images lists them, as the kubelet's does.
type ImageLister interface {
	// ListImages returns every image the runtime holds, in any order.
	ListImages(ctx context.Context) ([]provider.Image, error)
}

// RuntimeVersion is implemented by a Runtime that knows its name and version (CRI Version:
// "containerd", "1.6.20"), which the Node's nodeInfo.containerRuntimeVersion shows as the
// kubelet shows it, "<name>://<version>".
type RuntimeVersion interface {
	Name() string
	Version() string
}

// ImageUserService is implemented by a Runtime that runs images and knows which user each
// runs as (CRI: ImageStatus's uid or username). The lifecycle then holds a container with
// runAsNonRoot and no runAsUser to its image's user before creating it, as the kubelet's
// verifyRunAsNonRoot: root, or a user name it cannot tell is not root, leaves the container
// waiting with CreateContainerConfigError.
type ImageUserService interface {
	// ImageUser returns the user image runs as: its uid, or (uid nil) a non-numeric user
	// name; neither for an image that names no user, which runs as root.
	ImageUser(ctx context.Context, image string) (uid *int64, username string, err error)
}

// SandboxStatsReader is implemented by a Runtime that measures a pod as a whole (its cgroup),
// for what cannot be summed from its containers: the pressure stall information, which the
// Summary's pod CPU, memory and IO then carry, as the kubelet's do from the pod's cgroup.
type SandboxStatsReader interface {
	// SandboxStats measures the pod of a sandbox that has running containers.
	SandboxStats(ctx context.Context, sandboxID string) (*SandboxStats, error)
}

// SandboxAddresser is a Runtime that reads one sandbox's addresses without listing every
// sandbox: listing reads each one's record, so that every pod started would cost as many reads
// as there are pods (the process runtime: 100 pods started, 10,000 records read and decoded).
type SandboxAddresser interface {
	// SandboxIPs are the sandbox's addresses on the pod network; an error when it is unknown.
	SandboxIPs(ctx context.Context, id string) ([]string, error)
}

// HealthChecker is implemented by a Runtime that reports its own health (CRI Status): while it
// is down or not ready, the node is NotReady with the kubelet's message; running containers are
// never touched for it. A Runtime without it is taken as always healthy (host processes).
type HealthChecker = health.Checker

// ImageAuth is a registry credential from an image pull secret, as CRI's AuthConfig.
type ImageAuth struct {
	Username      string
	Password      string
	Auth          string
	ServerAddress string
	IdentityToken string
	RegistryToken string
}

// SandboxConfig describes a pod's sandbox.
type SandboxConfig struct {
	PodUID    types.UID
	Namespace string
	Name      string
	// Attempt counts sandboxes created for this pod UID (0 for the first).
	Attempt uint32
	// Hostname is the pod's hostname as the kubelet makes it: spec.hostnameOverride, else
	// spec.hostname, else its name, cut to the kernel's 63 characters.
	Hostname string
	// HostNetwork is spec.hostNetwork; a runtime that only has the host's network (processes)
	// runs every pod there.
	HostNetwork bool
	// DNS is the pod's resolver configuration as the kubelet makes it (Config.DNS), which its
	// containers see as /etc/resolv.conf, on the host's network or not; nil when the lifecycle
	// has no DNS configurer: the runtime's default then.
	DNS *dns.Config
	// RuntimeHandler is the handler of the pod's RuntimeClass (spec.runtimeClassName), CRI's
	// runtime_handler: "" for the runtime's default (a pod that names no RuntimeClass, or a
	// lifecycle without an API server). A runtime that lacks the handler fails the sandbox
	// with an error naming it, as a CRI runtime does.
	RuntimeHandler string
	// Ports are the ports the pod's containers declare.
	Ports []PortMapping
	// Labels identify the sandbox's pod for the lifecycle after an agent restart; the runtime
	// keeps them and returns them in SandboxStatus.
	Labels map[string]string
	// LogDirectory is the directory under which the pod's containers log (every
	// ContainerConfig.LogPath is below it), CRI's log_directory.
	LogDirectory string
	// Pod is the spec the sandbox is for, for a runtime that maps more of it than the fields
	// above (CRI: DNS, the pod's security context, sysctls). It is not the runtime's to keep.
	Pod *corev1.Pod `json:"-"`
}

// PortMapping is a declared container port.
type PortMapping struct {
	Protocol      string
	ContainerPort int32
	HostPort      int32
	HostIP        string
}

// SandboxState is whether a sandbox can run containers.
type SandboxState int

const (
	SandboxReady SandboxState = iota
	SandboxNotReady
)

// SandboxStatus reports a sandbox.
type SandboxStatus struct {
	ID        string
	PodUID    types.UID
	Namespace string
	Name      string
	Attempt   uint32
	State     SandboxState
	CreatedAt time.Time
	// IPs are the pod's addresses; empty for a runtime on the host's network, whose pods have
	// the node's addresses.
	IPs    []string
	Labels map[string]string
}

// ContainerConfig is one container instance to create: everything decided, nothing left for the
// runtime to interpret from the pod spec.
type ContainerConfig struct {
	// Name is the container's name in the pod; Attempt is its restart count (0 for the first
	// instance).
	Name    string
	Attempt uint32
	// Image is the container's image as the spec names it, and ImageRef the runtime's ID for it
	// that ImageService.PullImage or ImageRef returned; a process runtime ignores both.
	Image    string
	ImageRef string
	// Command and Args are what to run, expanded. An empty Command is the image's entrypoint
	// (a runtime without images is never given one); empty Args are the image's cmd, unless
	// Command is set.
	Command []string
	Args    []string
	// Env is the environment, "NAME=value", in order.
	Env []string
	// WorkingDir is the directory to start in; empty is the runtime's default.
	WorkingDir string
	// User is who runs the command; nil when the pod does not say, and the runtime decides.
	User *User
	// Mounts are the container's volume mounts, in the order of the spec.
	Mounts []Mount
	// Stdin keeps the container's stdin open for Attach; StdinOnce closes it after the first
	// attach ends; TTY gives the process a terminal.
	Stdin     bool
	StdinOnce bool
	TTY       bool
	// LogPath is the file the container's stdout and stderr go to, in the CRI log format
	// (package containerlog); the runtime writes it and never removes it.
	LogPath string
	// StopSignal is the signal StopContainer sends first; 0 means SIGTERM.
	StopSignal int
	// TargetContainerID is, for an ephemeral container with a targetContainerName, the ID of
	// the target's current instance, whose process namespace this one joins where the runtime
	// can (CRI: NamespaceMode TARGET); "" otherwise. Only a runtime that implements
	// EphemeralRuntime is given one.
	TargetContainerID string
	// Labels identify the container for the lifecycle after an agent restart; the runtime
	// keeps them and returns them in ContainerStatus.
	Labels map[string]string
	// Pod and Container are the spec this instance comes from, for a runtime that maps more of
	// it than the fields above (CRI: the security context, resources, devices). They are not
	// the runtime's to keep or change.
	Pod       *corev1.Pod       `json:"-"`
	Container *corev1.Container `json:"-"`
}

// Argv is the command line of a runtime that runs host commands: Command then Args.
func (c *ContainerConfig) Argv() []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}

// User is a numeric identity.
type User struct {
	UID                int64
	GID                int64
	SupplementalGroups []int64
}

// Mount is a host path made visible inside a container.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// ContainerState is a container's state as a runtime knows it.
type ContainerState int

const (
	ContainerCreated ContainerState = iota
	ContainerRunning
	ContainerExited
	ContainerUnknown
)

func (s ContainerState) String() string {
	switch s {
	case ContainerCreated:
		return "Created"
	case ContainerRunning:
		return "Running"
	case ContainerExited:
		return "Exited"
	}
	return "Unknown"
}

// ContainerStatus reports a container instance.
type ContainerStatus struct {
	ID        string
	SandboxID string
	Name      string
	Attempt   uint32
	State     ContainerState
	CreatedAt time.Time
	// StartedAt is set once it ran; FinishedAt and ExitCode once it exited.
	StartedAt  time.Time
	FinishedAt time.Time
	ExitCode   int32
	// Reason and Message explain an exit the exit code does not: "StartError" (the command
	// could not be started), "OOMKilled". Empty for an ordinary exit.
	Reason  string
	Message string
	LogPath string
	// ImageRef is the ID of the image the container runs (status imageID); empty for a
	// runtime without images.
	ImageRef string
	Labels   map[string]string
}

// ContainerEventType says what happened to a container.
type ContainerEventType int

const (
	ContainerStartedEvent ContainerEventType = iota
	ContainerExitedEvent
)

// ContainerEvent tells the lifecycle that a container's state changed; it reads the new state
// with ContainerStatus.
type ContainerEvent struct {
	ContainerID string
	SandboxID   string
	Type        ContainerEventType
	Labels      map[string]string
}

// ContainerStats is a container's resource use at one moment.
type ContainerStats struct {
	Timestamp time.Time
	// CPUUsageCoreNanoSeconds is the CPU time used since the container started, all its
	// processes together.
	CPUUsageCoreNanoSeconds uint64
	// MemoryWorkingSetBytes and MemoryUsageBytes are what its processes hold now (for
	// processes, both are the resident set).
	MemoryWorkingSetBytes uint64
	MemoryUsageBytes      uint64
	// WritableLayerBytes and WritableLayerInodes are what the container's writable layer
	// holds (CRI's writable_layer); 0 for a runtime without one (processes write to the host's
	// directories and volumes).
	WritableLayerBytes  uint64
	WritableLayerInodes uint64
	// Processes counts the container's processes (its cgroup's); 0 when the runtime cannot
	// tell.
	Processes uint64
	// PSI is the container's pressure stall information; empty where the runtime has none
	// (cgroup v1, no cgroups, a kernel without PSI).
	PSI PSI
}

// PSI is the pressure stall information of a container or a pod (its cgroup v2 cpu.pressure,
// memory.pressure and io.pressure), as the Summary API carries it and the kubelet fills it; nil
// for a resource the runtime cannot tell.
type PSI struct {
	CPU, Memory, IO *statsv1alpha1.PSIStats
}

// SandboxStats is a pod's resource use at one moment, as a whole.
type SandboxStats struct {
	Timestamp time.Time
	// PSI is the pod's pressure stall information; empty where the runtime has none.
	PSI PSI
}

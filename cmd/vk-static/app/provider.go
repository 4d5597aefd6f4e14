package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/agent"
	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/internal/host"
	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/provider/mock"
	"github.com/vk-static/vk-static/runtime/cri"
	"github.com/vk-static/vk-static/runtime/process"
)

// providers are the values --provider takes.
const (
	providerProcess = "process"
	providerCRI     = "cri"
	providerMock    = "mock"
)

// processOptions configure --provider process: who runs the containers of API pods and which
// host paths they may mount (static pods run as their manifests say unless RestrictStaticPods),
// how container logs rotate, and what the node keeps for itself.
type processOptions struct {
	DefaultUser          string
	AllowRoot            bool
	AllowedUIDs          []string
	AllowedGIDs          []string
	AllowedHostPaths     []string
	AllowHostNamespaces  bool
	AllowHostNetwork     bool
	CNIConfDir           string
	CNIBinDirs           []string
	CNICacheDir          string
	ContainerLogMaxSize  string
	RestrictStaticPods   bool
	Cgroups              cgroupOptions
	ContainerLogMaxFiles int32
	SystemReserved       map[string]string
	KubeReserved         map[string]string
	StopPodsOnExit       bool
}

func defaultProcessOptions() processOptions {
	return processOptions{DefaultUser: "nobody", ContainerLogMaxSize: "10Mi", ContainerLogMaxFiles: 5, Cgroups: defaultCgroupOptions(),
		// The kubelet's defaults when it ran CNI itself, and Debian's plugin directory.
		CNIConfDir: "/etc/cni/net.d", CNIBinDirs: []string{"/opt/cni/bin", "/usr/lib/cni"}, CNICacheDir: "/var/lib/cni/cache"}
}

// criOptions configure --provider cri, with the kubelet's flag names and defaults.
type criOptions struct {
	RuntimeEndpoint      string
	ImageEndpoint        string
	ImageGCHighThreshold int32
	ImageGCLowThreshold  int32
	ImageMinimumGCAge    time.Duration
	AllowPrivileged      bool
}

func defaultCRIOptions() criOptions {
	return criOptions{RuntimeEndpoint: cri.DefaultEndpoint, ImageGCHighThreshold: 85, ImageGCLowThreshold: 80, ImageMinimumGCAge: 2 * time.Minute}
}

func (o *options) addProviderFlags(fs *pflag.FlagSet) {
	p, c := &o.Process, &o.CRI
	fs.StringVar(&o.Provider, "provider", o.Provider, "What runs pods: process (each container a supervised host process; command and args say what runs, the image is not pulled), cri (container images through a CRI runtime such as containerd, as the kubelet) or mock (an instant simulator, for tests and scale).")
	fs.StringVar(&c.RuntimeEndpoint, "container-runtime-endpoint", c.RuntimeEndpoint, "With --provider cri: the CRI runtime's endpoint (a unix socket).")
	fs.StringVar(&c.ImageEndpoint, "image-service-endpoint", c.ImageEndpoint, "With --provider cri: the CRI image service's endpoint; empty is --container-runtime-endpoint.")
	fs.Int32Var(&c.ImageGCHighThreshold, "image-gc-high-threshold", c.ImageGCHighThreshold, "With --provider cri: the percent of the image filesystem's disk usage at and above which unused images are removed; 100 disables image garbage collection.")
	fs.Int32Var(&c.ImageGCLowThreshold, "image-gc-low-threshold", c.ImageGCLowThreshold, "With --provider cri: the percent of the image filesystem's disk usage image garbage collection frees space down to; not above --image-gc-high-threshold.")
	fs.DurationVar(&c.ImageMinimumGCAge, "minimum-image-ttl-duration", c.ImageMinimumGCAge, "With --provider cri: how long after the agent first sees an unused image it may be removed by image garbage collection or to reclaim disk (an image just pulled or imported is about to be used); 0 removes unused images at once.")
	fs.BoolVar(&c.AllowPrivileged, "allow-privileged", c.AllowPrivileged, "With --provider cri: run privileged containers when their pod asks for them; without it such pods are refused.")
	fs.StringVar(&p.DefaultUser, "process-default-user", p.DefaultUser, "With --provider process: who runs a container of an API pod that names no user (a user name or uid[:gid]). Static pods (manifest files, --manifest-url) run as their manifest says, root when it names no user, unless --process-restrict-static-pods.")
	fs.BoolVar(&p.AllowRoot, "process-allow-root", p.AllowRoot, "With --provider process: run the containers of API pods as root (uid 0), or with group 0, when the pod asks for it; without it such API pods are refused. Static pods may run as root unless --process-restrict-static-pods.")
	fs.StringSliceVar(&p.AllowedUIDs, "process-allowed-uids", p.AllowedUIDs, "With --provider process: the host's uids the containers of API pods may run as, ids and ranges such as 1000-1999,5000. Without it an API pod is refused a uid below 1000 or one /etc/passwd names, except --process-default-user's; uids from 1000 up that the host does not name need no listing. Root needs --process-allow-root. Static pods run as their manifest says unless --process-restrict-static-pods.")
	fs.StringSliceVar(&p.AllowedGIDs, "process-allowed-gids", p.AllowedGIDs, "With --provider process: the host's gids the containers of API pods may have (runAsGroup, supplementalGroups, fsGroup, or the group that comes with the user), ids and ranges such as 1000-1999,5000. Without it an API pod is refused a gid below 1000 or one /etc/group names, except --process-default-user's groups; gids from 1000 up that the host does not name need no listing. Group 0 needs --process-allow-root. Static pods run as their manifest says unless --process-restrict-static-pods.")
	fs.StringSliceVar(&p.AllowedHostPaths, "process-allowed-host-paths", p.AllowedHostPaths, "With --provider process: the host path prefixes the hostPath volumes of API pods may use; none by default, so API pods' hostPath volumes are refused. Static pods may mount any host path unless --process-restrict-static-pods.")
	fs.BoolVar(&p.AllowHostNamespaces, "process-allow-host-namespaces", p.AllowHostNamespaces, "With --provider process: admit API pods that ask for hostPID or hostIPC, which see and signal the host's processes and share its IPC; without it such API pods are refused. Static pods have the host's namespaces unless --process-restrict-static-pods.")
	fs.BoolVar(&p.AllowHostNetwork, "process-allow-host-network", p.AllowHostNetwork, "With --provider process: admit API pods that ask for hostNetwork, and run the others on the host's network too while the node has no pod network (--cni-conf-dir); without it such API pods are refused, and the others wait for a pod network, as on a kubelet's node whose network plugin is not ready. Static pods are on the host's network unless --process-restrict-static-pods.")
	fs.StringVar(&p.CNIConfDir, "cni-conf-dir", p.CNIConfDir, "With --provider process: the CNI network configurations; the first by file name (.conflist, .conf, .json) is the pod network, on which each API pod that does not ask for hostNetwork gets a network namespace and an address of its own. Read at each pod's start: a network installed later is used.")
	fs.StringSliceVar(&p.CNIBinDirs, "cni-bin-dir", p.CNIBinDirs, "With --provider process: the directories searched for the CNI plugins, in order.")
	fs.StringVar(&p.CNICacheDir, "cni-cache-dir", p.CNICacheDir, "With --provider process: where the CNI library keeps each pod's network result, for its removal.")
	p.Cgroups.addFlags(fs)
	fs.BoolVar(&p.RestrictStaticPods, "process-restrict-static-pods", p.RestrictStaticPods, "With --provider process: hold static pods (manifest files, --manifest-url) to the rules of API pods: --process-default-user, --process-allow-root, --process-allowed-uids, --process-allowed-gids, --process-allowed-host-paths, --process-allow-host-namespaces and --process-allow-host-network, and run in a sandbox. By default static pods are trusted as the kubelet trusts them: their manifests are the node administrator's.")
	fs.StringVar(&p.ContainerLogMaxSize, "container-log-max-size", p.ContainerLogMaxSize, "The size a container's log file reaches before it is rotated.")
	fs.Int32Var(&p.ContainerLogMaxFiles, "container-log-max-files", p.ContainerLogMaxFiles, "The log files kept per container, the current one included.")
	fs.StringToStringVar(&p.SystemReserved, "system-reserved", p.SystemReserved, "Resources kept for the system, subtracted from the Node's allocatable: cpu=500m,memory=1Gi,ephemeral-storage=1Gi.")
	fs.StringToStringVar(&p.KubeReserved, "kube-reserved", p.KubeReserved, "Resources kept for the agent, subtracted from the Node's allocatable, as --system-reserved.")
	fs.BoolVar(&p.StopPodsOnExit, "stop-pods-on-exit", p.StopPodsOnExit, "With --provider process: stop every container (with its grace period), then its pod's sandbox, when the agent stops; the next agent runs the pods again in new sandboxes, as after a reboot. By default containers keep running while the agent is stopped, restarted or upgraded, and the next agent takes them up again.")
}

// applyCRIConfig applies a KubeletConfiguration's runtime and image GC fields.
func applyCRIConfig(cfg *kubeletv1beta1.KubeletConfiguration, o *options, set func(flag string, apply func())) {
	if cfg.ContainerRuntimeEndpoint != "" {
		set("container-runtime-endpoint", func() { o.CRI.RuntimeEndpoint = cfg.ContainerRuntimeEndpoint })
	}
	if cfg.ImageServiceEndpoint != "" {
		set("image-service-endpoint", func() { o.CRI.ImageEndpoint = cfg.ImageServiceEndpoint })
	}
	if cfg.ImageGCHighThresholdPercent != nil {
		set("image-gc-high-threshold", func() { o.CRI.ImageGCHighThreshold = *cfg.ImageGCHighThresholdPercent })
	}
	if cfg.ImageGCLowThresholdPercent != nil {
		set("image-gc-low-threshold", func() { o.CRI.ImageGCLowThreshold = *cfg.ImageGCLowThresholdPercent })
	}
	if cfg.ImageMinimumGCAge.Duration != 0 {
		set("minimum-image-ttl-duration", func() { o.CRI.ImageMinimumGCAge = cfg.ImageMinimumGCAge.Duration })
	}
}

func (o *options) validateProvider(bad func(flag, format string, args ...any)) {
	if _, ok := providers[o.Provider]; !ok {
		bad("provider", "unknown provider %q (available: %s, %s, %s)", o.Provider, providerProcess, providerCRI, providerMock)
	}
	// The kubelet's validation of the image GC thresholds.
	if c := o.CRI; c.ImageGCHighThreshold < 0 || c.ImageGCHighThreshold > 100 {
		bad("image-gc-high-threshold", "must be between 0 and 100, got %d", c.ImageGCHighThreshold)
	} else if c.ImageGCLowThreshold < 0 || c.ImageGCLowThreshold > 100 {
		bad("image-gc-low-threshold", "must be between 0 and 100, got %d", c.ImageGCLowThreshold)
	} else if c.ImageGCLowThreshold > c.ImageGCHighThreshold {
		bad("image-gc-low-threshold", "%d is above --image-gc-high-threshold %d", c.ImageGCLowThreshold, c.ImageGCHighThreshold)
	}
	if o.CRI.ImageMinimumGCAge < 0 {
		bad("minimum-image-ttl-duration", "must not be negative, got %s", o.CRI.ImageMinimumGCAge)
	}
	if q, err := resource.ParseQuantity(o.Process.ContainerLogMaxSize); err != nil || q.Sign() <= 0 {
		bad("container-log-max-size", "%q is not a positive quantity such as 10Mi", o.Process.ContainerLogMaxSize)
	}
	if o.Process.ContainerLogMaxFiles < 2 {
		bad("container-log-max-files", "must be at least 2 (the current file and one rotated), got %d", o.Process.ContainerLogMaxFiles)
	}
	for flag, m := range map[string]map[string]string{"system-reserved": o.Process.SystemReserved, "kube-reserved": o.Process.KubeReserved} {
		if _, err := reservation(m); err != nil {
			bad(flag, "%v", err)
		}
	}
	o.Process.Cgroups.validate(bad)
	for flag, ids := range map[string][]string{"process-allowed-uids": o.Process.AllowedUIDs, "process-allowed-gids": o.Process.AllowedGIDs} {
		if _, err := process.ParseIDRanges(ids); err != nil {
			bad(flag, "%v", err)
		}
	}
	for _, p := range o.Process.AllowedHostPaths {
		if !filepath.IsAbs(p) {
			bad("process-allowed-host-paths", "%q is not an absolute path", p)
		}
	}
}

// reservation parses a --system-reserved style map.
func reservation(m map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, v := range m {
		switch corev1.ResourceName(name) {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods:
		default:
			return nil, fmt.Errorf("unknown resource %q (cpu, memory, ephemeral-storage, pods)", name)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %v", name, v, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// providers are the factories --provider chooses from: each builds the agent's provider from
// the options when the agent is built (agent.New), with what the agent gives every provider.
var providers = map[string]func(ctx context.Context, o *options) agent.NewProviderFunc{
	providerProcess: processProvider,
	providerCRI:     criProvider,
	providerMock:    mockProvider,
}

// mockProvider simulates pods, and a Node with --max-pods and the mock's taint.
func mockProvider(_ context.Context, o *options) agent.NewProviderFunc {
	return func(pc agent.ProviderConfig) (agent.Provider, error) {
		p, err := mock.New(mock.Config{NodeName: pc.NodeName, InternalIP: firstIP(pc.NodeIPs), Pods: *resource.NewQuantity(int64(o.MaxPods), resource.DecimalSI)})
		if err != nil {
			return nil, err
		}
		p.ConfigureNode(pc.Node)
		return p, nil
	}
}

// firstIP is the first of ips, "" for none.
func firstIP(ips []string) string {
	if len(ips) == 0 {
		return ""
	}
	return ips[0]
}

// machineResources sets the Node's capacity from the machine and its allocatable, that less
// --system-reserved, --kube-reserved and the hard eviction thresholds (the kubelet's node
// allocatable), and returns the allocatable.
func machineResources(o *options, n *corev1.Node) (corev1.ResourceList, error) {
	capacity, err := host.Capacity(o.RootDir, int64(o.MaxPods))
	if err != nil {
		return nil, fmt.Errorf("--provider %s: read the machine's capacity: %w", o.Provider, err)
	}
	system, _ := reservation(o.Process.SystemReserved) // validated
	kube, _ := reservation(o.Process.KubeReserved)
	thresholds, _ := o.evictionThresholds() // validated
	n.Status.Capacity = capacity
	n.Status.Allocatable = host.Allocatable(capacity, system, kube, eviction.HardReservation(thresholds, capacity))
	return n.Status.Allocatable, nil
}

// processProvider runs each container as a host process under a supervisor: the one installed
// beside the agent, else the agent re-executed.
func processProvider(ctx context.Context, o *options) agent.NewProviderFunc {
	return func(pc agent.ProviderConfig) (agent.Provider, error) {
		allocatable, err := machineResources(o, pc.Node)
		if err != nil {
			return nil, err
		}
		logMax := resource.MustParse(o.Process.ContainerLogMaxSize)
		allowedUIDs, _ := process.ParseIDRanges(o.Process.AllowedUIDs) // validated
		allowedGIDs, _ := process.ParseIDRanges(o.Process.AllowedGIDs)
		exe, _ := os.Executable()
		supervisor := supervisorBeside(exe)
		if supervisor != "" {
			klog.FromContext(ctx).Info("Container supervisor", "binary", supervisor)
		} else {
			klog.FromContext(ctx).Info("Container supervisor: the agent itself, re-executed — install "+supervisorBinaryName+" beside it to spare each container the agent's start-up and memory", "binary", exe)
		}
		rt, err := process.New(process.Config{
			StateDir:    filepath.Join(o.RootDir, "process"),
			DefaultUser: o.Process.DefaultUser,
			AllowRoot:   o.Process.AllowRoot,
			AllowedUIDs: allowedUIDs,
			AllowedGIDs: allowedGIDs,
			// Static pods are the node administrator's (trust follows the source), unless held
			// to the API pods' rules.
			RestrictStaticPods:  o.Process.RestrictStaticPods,
			AllowHostNamespaces: o.Process.AllowHostNamespaces,
			AllowHostNetwork:    o.Process.AllowHostNetwork,
			CNI:                 &process.CNI{ConfDir: o.Process.CNIConfDir, BinDirs: o.Process.CNIBinDirs, CacheDir: o.Process.CNICacheDir},
			MaskedPaths:         maskedPaths(o),
			Cgroups:             o.Process.Cgroups.processCgroups(),
			LogMaxSize:          logMax.Value(),
			LogMaxFiles:         int(o.Process.ContainerLogMaxFiles),
			NodeIPs:             pc.NodeIPs,
			// Empty re-executes the agent.
			SupervisorPath: supervisor,
		})
		if err != nil {
			return nil, fmt.Errorf("--provider process: %w", err)
		}
		logCgroups(ctx, rt, &o.Process.Cgroups)
		cfg := lifecycleConfig(o, pc.NodeName, allocatable)
		cfg.Runtime, cfg.RuntimeName = rt, providerProcess
		cfg.AllowedHostPaths, cfg.HostPathFlag = o.Process.AllowedHostPaths, "--process-allowed-host-paths"
		cfg.StopPodsOnExit = o.Process.StopPodsOnExit
		cfg.RestrictStaticPods, cfg.RestrictStaticPodsFlag = o.Process.RestrictStaticPods, "--process-restrict-static-pods"
		// The runtime is the lifecycle's from here on: it closes it, or NewProvider if it fails.
		return lifecycle.NewProvider(ctx, cfg)(pc)
	}
}

// nodeAgentState are the well-known places of a node's agents — the kubelet's, kubeadm's,
// containerd's, Docker's and etcd's state, configuration and sockets — that a host may have
// beside vk-static: an API pod sees none of them.
var nodeAgentState = []string{
	"/etc/kubernetes", "/var/lib/kubelet", "/var/lib/etcd", "/var/lib/containerd", "/run/containerd",
	"/var/lib/docker", "/run/docker", "/run/docker.sock", "/etc/vk-static", "/etc/cni", "/var/lib/cni",
}

// maskedPaths are what restricted pods see as empty (process.Config.MaskedPaths): the agent's
// root directory, its credentials and configuration — which may hold a manifest URL's bearer
// token — the static pods' manifests, and nodeAgentState.
func maskedPaths(o *options) []string {
	out := []string{o.RootDir}
	for _, p := range append([]string{o.Kubeconfig, o.BootstrapKubeconfig, o.CertDir, o.TLSCertFile, o.TLSPrivateKeyFile,
		o.ClientCAFile, o.Config, o.PodManifestPath}, o.ManifestURLHeaderFile...) {
		if p != "" {
			out = append(out, p)
		}
	}
	return append(out, nodeAgentState...)
}

// lifecycleConfig is what the lifecycle takes from the options whatever the runtime (the agent
// gives it the rest: lifecycle.NewProvider).
func lifecycleConfig(o *options, nodeName string, allocatable corev1.ResourceList) lifecycle.Config {
	cfg := lifecycle.Config{
		RootDir:    o.RootDir,
		PodLogsDir: o.PodLogsDir,
		// A pod's domain with spec.subdomain (its /etc/hosts, setHostnameAsFQDN).
		ClusterDomain: o.ClusterDomain,
		DNS:           o.dnsConfigurer(),
		Allocatable:   allocatable,
		// The kubelet's sysctl admission, whatever the runtime.
		AllowedUnsafeSysctls: o.AllowedUnsafeSysctls,
		NodeStats:            (&host.Stats{NodeName: nodeName, RootDir: o.RootDir, StartTime: time.Now()}).Node,
		// The kubelet brings config map, secret and downward API volumes up to date on its
		// periodic pod sync.
		VolumeRefresh: o.SyncFrequency,
	}
	o.applyNodeHealth(&cfg)
	o.applyShutdown(&cfg)
	return cfg
}

// criProvider runs pods through the CRI runtime at --container-runtime-endpoint; the runtime's
// name ("containerd") is the scheme of the pods' container IDs.
func criProvider(ctx context.Context, o *options) agent.NewProviderFunc {
	return func(pc agent.ProviderConfig) (agent.Provider, error) {
		allocatable, err := machineResources(o, pc.Node)
		if err != nil {
			return nil, err
		}
		logMax := resource.MustParse(o.Process.ContainerLogMaxSize)
		rt, err := cri.New(ctx, cri.Config{
			RuntimeEndpoint:      o.CRI.RuntimeEndpoint,
			ImageEndpoint:        o.CRI.ImageEndpoint,
			AllowPrivileged:      o.CRI.AllowPrivileged,
			ImageGCHighThreshold: int(o.CRI.ImageGCHighThreshold),
			ImageGCLowThreshold:  int(o.CRI.ImageGCLowThreshold),
			ImageMinimumGCAge:    o.CRI.ImageMinimumGCAge,
			SeccompProfileRoot:   filepath.Join(o.RootDir, "seccomp"),
			LogMaxSize:           logMax.Value(),
			LogMaxFiles:          int(o.Process.ContainerLogMaxFiles),
		})
		if err != nil {
			return nil, fmt.Errorf("--provider cri: %w; --container-runtime-endpoint must name the socket of a running CRI runtime: install and start containerd (e.g. apt-get install containerd runc) or CRI-O, or point the flag at its socket", err)
		}
		klog.FromContext(ctx).Info("Container runtime", "name", rt.Name(), "version", rt.Version(), "endpoint", o.CRI.RuntimeEndpoint)
		cfg := lifecycleConfig(o, pc.NodeName, allocatable)
		cfg.Runtime, cfg.RuntimeName = rt, rt.Name()
		// Pods mount host paths as the kubelet lets them: any.
		cfg.AllowedHostPaths, cfg.HostPathFlag = []string{"/"}, ""
		if gc := rt.ImageGC(); gc != nil {
			cfg.RuntimeWork = append(cfg.RuntimeWork, gc)
		}
		if logs := rt.LogRotator(); logs != nil {
			cfg.RuntimeWork = append(cfg.RuntimeWork, logs)
		}
		// The runtime is the lifecycle's from here on: it closes it, or NewProvider if it fails.
		return lifecycle.NewProvider(ctx, cfg)(pc)
	}
}

// providerSummary names the provider for the start-up line.
func providerSummary(o *options) string {
	if o.Provider == providerCRI {
		parts := []string{"cri", o.CRI.RuntimeEndpoint}
		if o.CRI.AllowPrivileged {
			parts = append(parts, "privileged allowed")
		}
		return strings.Join(parts, ", ")
	}
	if o.Provider != providerProcess {
		return o.Provider
	}
	parts := []string{"process", "API pods: default user " + o.Process.DefaultUser}
	if o.Process.AllowRoot {
		parts = append(parts, "root allowed")
	}
	if len(o.Process.AllowedUIDs) > 0 {
		parts = append(parts, "host uids "+strings.Join(o.Process.AllowedUIDs, ",")+" allowed")
	}
	if len(o.Process.AllowedGIDs) > 0 {
		parts = append(parts, "host gids "+strings.Join(o.Process.AllowedGIDs, ",")+" allowed")
	}
	if len(o.Process.AllowedHostPaths) > 0 {
		parts = append(parts, "host paths under "+strings.Join(o.Process.AllowedHostPaths, ","))
	}
	if o.Process.AllowHostNamespaces {
		parts = append(parts, "hostPID and hostIPC allowed")
	}
	if o.Process.AllowHostNetwork {
		parts = append(parts, "the host's network allowed")
	}
	if o.Process.RestrictStaticPods {
		parts = append(parts, "static pods held to the same rules")
	} else {
		parts = append(parts, "static pods as their manifests say")
	}
	return strings.Join(parts, ", ")
}

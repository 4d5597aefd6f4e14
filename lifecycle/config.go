package lifecycle

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/agent"
	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/lifecycle/env"
	"github.com/vk-static/vk-static/nodeobjects"
	"github.com/vk-static/vk-static/nodeshutdown"
)

// Config is what New needs. Runtime, RuntimeName and RootDir are required.
type Config struct {
	// Runtime runs the containers; RuntimeName is its container ID scheme ("process" gives
	// container IDs process://<id>).
	Runtime     Runtime
	RuntimeName string
	// RootDir holds the lifecycle's state: RootDir/pods/<uid>/ has the pod as it was given
	// (pod.json, so that a restarted agent knows its pods) and its volumes.
	RootDir string
	// PodLogsDir is where the containers log, the kubelet's podLogsDir ([Provider.logPath]):
	// <PodLogsDir>/<namespace>_<name>_<uid>/<container>/<attempt>.log, with links to the logs
	// of the containers there are in the directory "containers" beside it (/var/log/containers
	// beside the kubelet's /var/log/pods). Default RootDir/logs/pods.
	PodLogsDir string
	// NodeIPs are the node's addresses: the pods' host IPs, and their pod IPs when the runtime
	// reports none (pods on the host's network).
	NodeIPs []string
	// ClusterDomain is the cluster's DNS domain (the kubelet's --cluster-domain, e.g.
	// cluster.local): a pod with spec.subdomain is hostname.<subdomain>.<namespace>.svc.<it>
	// in its /etc/hosts, and its hostname with setHostnameAsFQDN.
	ClusterDomain string
	// DNS makes each pod's resolver configuration (SandboxConfig.DNS) from its dnsPolicy and
	// dnsConfig, as the kubelet's --cluster-dns, --cluster-domain and --resolv-conf do; its
	// ClusterDomain, when empty, is ClusterDomain. Nil leaves the pods' DNS to the runtime.
	DNS *dns.Configurer
	// Allocatable is what resourceFieldRef reports for a limit a container does not set.
	Allocatable corev1.ResourceList
	// Node is the Node that pods are admitted on ([Provider.nodeAdmitLocked]), as the kubelet admits them on
	// its cached Node: its allocatable and pod count, labels and taints. NewProvider sets it to
	// the Node as the API server holds it now (agent.ProviderConfig.CurrentNode), else as the
	// agent registers it; nil admits pods without checking that they fit.
	Node func() *corev1.Node
	// Objects reads the config maps and secrets an API pod's env and volumes use, with the
	// node's identity; nil without an API server (static pods cannot use them).
	Objects nodeobjects.ObjectGetter
	// Tokens requests the service account tokens of API pods' projected volumes (their
	// kube-api-access-* volume) with the node's identity; nil without an API server.
	Tokens nodeobjects.TokenRequester
	// RuntimeClasses reads the RuntimeClass a pod names (spec.runtimeClassName), whose handler
	// its sandbox runs with (SandboxConfig.RuntimeHandler), with the node's identity; a
	// RuntimeClass that does not exist fails the sandbox, as the kubelet's. Nil without an API
	// server: every sandbox has the runtime's default handler, as a standalone kubelet's.
	RuntimeClasses nodeobjects.RuntimeClassGetter
	// AllowedHostPaths are the prefixes the hostPath volumes of API pods must be under;
	// HostPathFlag is the flag that sets them, named in refusals. Static pods may use any host
	// path, unless RestrictStaticPods holds them to AllowedHostPaths too (RestrictStaticPodsFlag
	// sets it, named in their refusals).
	AllowedHostPaths       []string
	HostPathFlag           string
	RestrictStaticPods     bool
	RestrictStaticPodsFlag string
	// Services are the cluster's Services, for the service environment variables of the
	// pods' containers (nodeobjects.ServiceWatch, with the node's identity); nil gives none, as a
	// kubelet without an API server. Run runs it when it has a Run method.
	Services env.Services
	// AllowedUnsafeSysctls are the sysctls (and sysctl patterns ending in "*") a pod may set
	// besides the kubelet's safe ones, the kubelet's --allowed-unsafe-sysctls; a pod setting
	// any other is refused with reason SysctlForbidden, as the kubelet refuses it.
	AllowedUnsafeSysctls []string
	// Recorder receives the pods' events (Killing, BackOff, Unhealthy, Failed, FailedMount);
	// nil records none.
	Recorder record.EventRecorder
	// NodeStats measures the node for the Summary API; nil leaves the node's figures out.
	NodeStats func() (*statsv1alpha1.NodeStats, error)
	// VolumeRefresh is how often the config map, secret and downward API volumes of a running
	// pod are brought up to date (the kubelet does it on each pod sync); default
	// DefaultVolumeRefresh.
	VolumeRefresh time.Duration
	// StopPodsOnExit stops every pod's containers, with their grace periods, then its sandbox,
	// when Run returns, as a reboot would; by default they keep running while the agent is
	// stopped (restarted, upgraded) and the next agent takes them up again.
	StopPodsOnExit bool
	// RuntimeStatusPeriod is how often the health of a Runtime that reports it (health.Checker)
	// is asked, and RuntimeStatusThreshold how long it may go without saying it is ready before
	// the Node turns NotReady ("container runtime is down"); defaults the kubelet's, 5 s and
	// 30 s, which it does not let be configured.
	RuntimeStatusPeriod    time.Duration
	RuntimeStatusThreshold time.Duration
	// Eviction, when set, measures the node's eviction signals against its thresholds,
	// reports MemoryPressure, DiskPressure and PIDPressure and evicts pods as the kubelet does
	// (package eviction; [Provider.evictPod]); its Measure defaults to the host's, with RootDir as the
	// nodefs and the runtime's image filesystem (ImageFsDir) as the imagefs; the pods, their
	// usage, their eviction and the node-level reclaim are the provider's, whatever this
	// Config sets. Nil reports no pressure conditions and evicts nothing.
	Eviction *eviction.Config
	// Shutdown, when set and asking for a grace period, delays the host's shutdown to stop the
	// pods gracefully as the kubelet's node shutdown manager does (package nodeshutdown;
	// [newShutdownManager]); the pods and how they are stopped are the provider's, whatever this Config
	// sets. Nil leaves the host's shutdown alone.
	Shutdown *nodeshutdown.Config
	// NodeName is the node's, for the events about it (EvictionThresholdMet, NodeShutdown); ""
	// records none.
	NodeName string
	// Registerer receives the lifecycle's metrics ([metrics]); nil registers them nowhere.
	Registerer prometheus.Registerer
	// RuntimeWork is the runtime's own work (the CRI runtime's image garbage collection and log
	// rotation): the provider NewProvider builds runs it beside the pods, until the agent stops.
	RuntimeWork []agent.Component
	// Clock is the time source; nil is the real clock.
	Clock clock.WithTickerAndDelayedExecution
}

// DefaultVolumeRefresh is the kubelet's default pod sync period, with which it updates
// projected volumes.
const DefaultVolumeRefresh = time.Minute

// Labels the lifecycle gives sandboxes and containers, the kubelet's CRI labels, so that a
// restarted agent knows which pod and container each one is.
const (
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelContainerHash is containerHash of the spec an instance was created from: an API
	// pod's container whose image changes is restarted, as the kubelet does.
	LabelContainerHash = "io.kubernetes.container.hash"
)

func (c *Config) validate() error {
	switch {
	case c.Runtime == nil:
		return errors.New("lifecycle: Config.Runtime is required")
	case c.RuntimeName == "":
		return errors.New("lifecycle: Config.RuntimeName is required")
	case c.RootDir == "":
		return errors.New("lifecycle: Config.RootDir is required")
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.PodLogsDir == "" {
		c.PodLogsDir = filepath.Join(c.RootDir, "logs", "pods")
	}
	if c.DNS != nil && c.DNS.ClusterDomain == "" {
		d := *c.DNS
		d.ClusterDomain = c.ClusterDomain
		c.DNS = &d
	}
	if c.VolumeRefresh <= 0 {
		c.VolumeRefresh = DefaultVolumeRefresh
	}
	if c.Recorder == nil {
		c.Recorder = &record.FakeRecorder{} // drops events: no channel
	}
	return nil
}

func (c *Config) podsDir() string { return filepath.Join(c.RootDir, "pods") }

// containerLogsDir holds the links to the containers' logs ([Provider.linkContainerLog]).
func (c *Config) containerLogsDir() string {
	return filepath.Join(filepath.Dir(c.PodLogsDir), "containers")
}

package app

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vk-static/vk-static/internal/memlimit"
	"github.com/vk-static/vk-static/lifecycle/dns"
	"github.com/vk-static/vk-static/node"
	"github.com/vk-static/vk-static/node/api"
	"github.com/vk-static/vk-static/nodeshutdown"
	"github.com/vk-static/vk-static/sources"
)

// options are the agent's settings, named as the kubelet names them.
type options struct {
	Config                    string
	Kubeconfig                string
	BootstrapKubeconfig       string
	CertDir                   string
	RotateCertificates        bool
	RotateServerCertificates  bool
	HostnameOverride          string
	NodeIP                    string
	Address                   string
	Port                      int32
	HealthzBindAddress        string
	HealthzPort               int32
	PodManifestPath           string
	ManifestURL               string
	ManifestURLHeader         []string
	ManifestURLHeaderFile     []string
	FileCheckFrequency        time.Duration
	HTTPCheckFrequency        time.Duration
	SyncFrequency             time.Duration
	Provider                  string
	RootDir                   string
	PodLogsDir                string
	KubeAPIQPS                float32
	KubeAPIBurst              int32
	EventQPS                  float32
	EventBurst                int32
	MaxPods                   int32
	NodeLabels                map[string]string
	RegisterWithTaints        []string
	NodeStatusUpdateFrequency time.Duration
	NodeStatusReportFrequency time.Duration
	NodeLeaseDurationSeconds  int32
	NodeStatusMaxImages       int32
	PodSyncWorkers            int
	Profiling                 bool
	MemoryLimit               string
	Process                   processOptions
	CRI                       criOptions
	AllowedUnsafeSysctls      []string
	ClusterDomain             string
	ClusterDNS                []string
	ResolvConf                string
	NodeHealth                nodeHealthOptions
	// Shutdown is the graceful node shutdown's grace periods, from --config only
	// ([applyShutdownConfig]).
	Shutdown nodeshutdown.Config

	// headerFiles are the --manifest-url-header-file files as validate read them
	// ([options.validateManifestHeader]).
	headerFiles []headerFile

	// The kubelet API's TLS, authentication and authorization ([options.addKubeletAPIFlags]).
	TLSCertFile                              string
	TLSPrivateKeyFile                        string
	TLSMinVersion                            string
	TLSCipherSuites                          []string
	ClientCAFile                             string
	AnonymousAuth                            bool
	AuthenticationTokenWebhook               bool
	AuthenticationTokenWebhookCacheTTL       time.Duration
	AuthorizationMode                        string
	AuthorizationWebhookCacheAuthorizedTTL   time.Duration
	AuthorizationWebhookCacheUnauthorizedTTL time.Duration
	StreamingConnectionIdleTimeout           time.Duration
}

// defaultOptions are the kubelet's defaults, taken from the packages that use them wherever a
// package has one.
func defaultOptions() *options {
	return &options{
		Address:                   "", // 0.0.0.0, or 127.0.0.1 standalone: api.Config decides
		Port:                      10250,
		HealthzBindAddress:        "127.0.0.1",
		HealthzPort:               10248,
		FileCheckFrequency:        sources.DefaultFileCheckFrequency,
		HTTPCheckFrequency:        sources.DefaultHTTPCheckFrequency,
		SyncFrequency:             node.DefaultSyncFrequency,
		Provider:                  providerProcess,
		Process:                   defaultProcessOptions(),
		CRI:                       defaultCRIOptions(),
		NodeHealth:                defaultNodeHealthOptions(),
		RootDir:                   "/var/lib/vk-static",
		PodLogsDir:                "/var/log/pods",
		KubeAPIQPS:                50,
		KubeAPIBurst:              100,
		EventQPS:                  50,
		EventBurst:                100,
		MaxPods:                   110,
		ResolvConf:                dns.HostResolvConf,
		NodeStatusUpdateFrequency: 10 * time.Second, // the kubelet's; the node package's own default is for heartbeats through the Lease only
		NodeStatusReportFrequency: node.DefaultStatusReportFrequency,
		NodeLeaseDurationSeconds:  node.DefaultLeaseDurationSeconds,
		NodeStatusMaxImages:       node.DefaultNodeStatusMaxImages,
		PodSyncWorkers:            node.DefaultPodSyncWorkers,
		MemoryLimit:               "auto",
		RotateCertificates:        true,
		// The kubelet's KubeletConfiguration defaults, secure ones (its flags' defaults are not).
		AuthenticationTokenWebhook:               true,
		AuthenticationTokenWebhookCacheTTL:       api.DefaultAuthenticationCacheTTL,
		AuthorizationMode:                        api.AuthorizationModeWebhook,
		AuthorizationWebhookCacheAuthorizedTTL:   api.DefaultAuthorizedCacheTTL,
		AuthorizationWebhookCacheUnauthorizedTTL: api.DefaultUnauthorizedCacheTTL,
		StreamingConnectionIdleTimeout:           api.DefaultStreamingConnectionIdleTimeout,
	}
}

// addFlags registers every flag of the agent on fs (the sections of flagSections, logging
// included).
func (o *options) addFlags(fs *pflag.FlagSet) {
	fss := o.flagSections()
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
}

func (o *options) addGeneralFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Config, "config", o.Config, "A kubelet.config.k8s.io/v1beta1 KubeletConfiguration file; flags given on the command line win over it. Its fields that vk-static reads are named beside the flags below; an unknown field is an error, a kubelet field vk-static does not use is logged and ignored.")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "Directory for the agent's and the provider's state.")
	fs.StringVar(&o.PodLogsDir, "pod-logs-dir", o.PodLogsDir, "Directory the containers log under, as the kubelet's: DIR/NAMESPACE_NAME_UID/CONTAINER/RESTARTS.log, with links to the current logs as POD_NAMESPACE_CONTAINER-ID.log in the directory containers beside it (/var/log/containers for the default), where log shippers read them.")
	fs.DurationVar(&o.SyncFrequency, "sync-frequency", o.SyncFrequency, "How often every pod is synced again without an event asking for it (spread by up to half of it): the safety net that repairs what a lost or misleading answer left wrong.")
	fs.IntVar(&o.PodSyncWorkers, "pod-sync-workers", o.PodSyncWorkers, "Pods synced in parallel.")
}

func (o *options) addSourceFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.PodManifestPath, "pod-manifest-path", o.PodManifestPath, "A directory of static pod manifests (*.yaml, *.yml, *.json), or a single file. Only regular files are read: a FIFO, socket or device (or a symlink to one) is reported and skipped. Symlinks are followed, and a symlink switched atomically to another directory is followed at once. A path that does not exist or cannot be read is reported (a Warning event on the Node) and its pods are kept until it is back; it is picked up as soon as it appears.")
	fs.StringVar(&o.ManifestURL, "manifest-url", o.ManifestURL, "A URL serving static pod manifests, polled.")
	fs.StringSliceVar(&o.ManifestURLHeader, "manifest-url-header", o.ManifestURLHeader, "An HTTP header 'Name:value' sent with every manifest URL request; repeatable. Every user of the machine can read the command line (/proc/<pid>/cmdline): give credentials in --manifest-url-header-file, or as staticPodURLHeader in the --config file, instead.")
	fs.StringArrayVar(&o.ManifestURLHeaderFile, "manifest-url-header-file", o.ManifestURLHeaderFile, "A `file` of HTTP headers sent with every manifest URL request, one 'Name: value' a line (blank lines and lines starting with # skipped), read once at start; repeatable. For credentials (Authorization: Bearer …), which this keeps off the command line: make it 0600 (a file others can read is logged as a warning). A file that cannot be read, holds no header or a line that is not one, is refused. A header name set by two of these files, or by one and --manifest-url-header, is refused too; repeated within one, it is sent with each value.")
	fs.DurationVar(&o.FileCheckFrequency, "file-check-frequency", o.FileCheckFrequency, "How often the manifest path is re-listed in full (changes are seen at once through inotify; this is the safety net, and how soon a path whose parent did not exist is noticed at the latest).")
	fs.DurationVar(&o.HTTPCheckFrequency, "http-check-frequency", o.HTTPCheckFrequency, "How often the manifest URL is polled.")
}

func (o *options) addNodeFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "The node name (default: the lowercased hostname).")
	fs.StringVar(&o.NodeIP, "node-ip", o.NodeIP, "The InternalIP the Node reports (default: the address of the hostname).")
	fs.StringToStringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "Labels the Node registers with, key=value pairs.")
	fs.StringSliceVar(&o.RegisterWithTaints, "register-with-taints", o.RegisterWithTaints, "Taints the Node registers with: key=value:Effect or key:Effect.")
	fs.DurationVar(&o.NodeStatusUpdateFrequency, "node-status-update-frequency", o.NodeStatusUpdateFrequency, "How often the Node's status is computed; a change is written at once.")
	fs.DurationVar(&o.NodeStatusReportFrequency, "node-status-report-frequency", o.NodeStatusReportFrequency, "How often the Node's status is written when nothing changed, to refresh its heartbeats (the Lease says the node is alive meanwhile); the first period after a start or a change is spread by up to half of it. (The kubelet sets it in its config file only.)")
	fs.Int32Var(&o.NodeLeaseDurationSeconds, "node-lease-duration-seconds", o.NodeLeaseDurationSeconds, "Duration of the node Lease; it is renewed every quarter of it.")
	fs.Int32Var(&o.NodeStatusMaxImages, "node-status-max-images", o.NodeStatusMaxImages, "The maximum number of the runtime's images the Node's status.images lists, the largest first; -1 lists all of them. (--provider process has none.)")
}

func (o *options) addClientFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig with the node's credentials. Without it the agent runs standalone: static pods only, no API server.")
	o.addCertificateFlags(fs)
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Queries per second to the API server.")
	fs.Int32Var(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of queries to the API server.")
	fs.Float32Var(&o.EventQPS, "event-qps", o.EventQPS, "Events per second sent to the API server (their own limit, apart from --kube-api-qps); -1 for no client-side limit.")
	fs.Int32Var(&o.EventBurst, "event-burst", o.EventBurst, "Burst of events sent to the API server.")
}

// addServingFlags registers the addresses the agent serves on; addKubeletAPIFlags the kubelet
// API's TLS and authentication.
func (o *options) addServingFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Address, "address", o.Address, "IP address of the kubelet HTTP API (default 0.0.0.0, or 127.0.0.1 without --kubeconfig).")
	fs.Int32Var(&o.Port, "port", o.Port, "Port of the kubelet HTTP API (HTTPS: logs, exec, port-forward through the API server), advertised in the Node's daemonEndpoints; 0 serves none.")
	fs.StringVar(&o.HealthzBindAddress, "healthz-bind-address", o.HealthzBindAddress, "Address of the healthz (and metrics) endpoint.")
	fs.Int32Var(&o.HealthzPort, "healthz-port", o.HealthzPort, "Port of the healthz endpoint; 0 disables it.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Serve net/http/pprof under /debug/pprof/ on the kubelet API (--port), as the kubelet does: behind its authentication and authorization (get on nodes/proxy; standalone, the local administrator), never on the unauthenticated healthz port. With --port 0 it is not served.")
	o.addKubeletAPIFlags(fs)
}

func (o *options) addResourceFlags(fs *pflag.FlagSet) {
	fs.Int32Var(&o.MaxPods, "max-pods", o.MaxPods, "Pods this node can run (its pods capacity).")
	fs.StringVar(&o.MemoryLimit, "memory-limit", o.MemoryLimit, "The agent's soft memory limit (the Go runtime's, as GOMEMLIMIT sets it, which wins): a quantity such as 256Mi, none, or auto — 32Mi plus 20Ki per --max-pods pod, raised if the live heap outgrows it.")
}

// validate checks every option and names the flag that is wrong.
func (o *options) validate() error {
	var errs []string
	bad := func(flag, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("--%s: %s", flag, fmt.Sprintf(format, args...)))
	}
	if o.HostnameOverride != "" {
		if msgs := validation.IsDNS1123Subdomain(o.HostnameOverride); len(msgs) > 0 {
			bad("hostname-override", "%q is not a valid node name: %s", o.HostnameOverride, strings.Join(msgs, "; "))
		}
	}
	if o.NodeIP != "" && net.ParseIP(o.NodeIP) == nil {
		bad("node-ip", "%q is not an IP address", o.NodeIP)
	}
	if o.Address != "" && net.ParseIP(o.Address) == nil {
		bad("address", "%q is not an IP address", o.Address)
	}
	if net.ParseIP(o.HealthzBindAddress) == nil {
		bad("healthz-bind-address", "%q is not an IP address", o.HealthzBindAddress)
	}
	for flag, port := range map[string]int32{"port": o.Port, "healthz-port": o.HealthzPort} {
		if port < 0 || port > 65535 {
			bad(flag, "%d is not a port", port)
		}
	}
	if o.ManifestURL != "" && !strings.HasPrefix(o.ManifestURL, "http://") && !strings.HasPrefix(o.ManifestURL, "https://") {
		bad("manifest-url", "%q must be an http:// or https:// URL", o.ManifestURL)
	}
	o.validateManifestHeader(bad)
	for flag, d := range map[string]time.Duration{"file-check-frequency": o.FileCheckFrequency, "http-check-frequency": o.HTTPCheckFrequency, "sync-frequency": o.SyncFrequency, "node-status-update-frequency": o.NodeStatusUpdateFrequency, "node-status-report-frequency": o.NodeStatusReportFrequency} {
		if d <= 0 {
			bad(flag, "must be positive, got %s", d)
		}
	}
	if o.NodeStatusMaxImages < -1 {
		bad("node-status-max-images", "must be -1 (no cap) or more, got %d", o.NodeStatusMaxImages)
	}
	o.validateProvider(bad)
	o.validateSysctls(bad)
	o.validateNodeHealth(bad)
	o.validateDNS(bad)
	o.validateCgroupDriver(bad)
	o.validateCertificates(bad)
	if o.RootDir == "" {
		bad("root-dir", "must not be empty")
	}
	if !filepath.IsAbs(o.PodLogsDir) {
		bad("pod-logs-dir", "%q is not an absolute path", o.PodLogsDir)
	}
	if o.KubeAPIQPS <= 0 && o.KubeAPIQPS != -1 {
		bad("kube-api-qps", "must be positive (or -1 for no client-side limit), got %v", o.KubeAPIQPS)
	}
	if o.KubeAPIBurst <= 0 {
		bad("kube-api-burst", "must be positive, got %d", o.KubeAPIBurst)
	}
	if o.EventQPS <= 0 && o.EventQPS != -1 {
		bad("event-qps", "must be positive (or -1 for no client-side limit), got %v", o.EventQPS)
	}
	if o.EventBurst <= 0 {
		bad("event-burst", "must be positive, got %d", o.EventBurst)
	}
	if o.MaxPods <= 0 {
		bad("max-pods", "must be positive, got %d", o.MaxPods)
	}
	for k, v := range o.NodeLabels {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			bad("node-labels", "label key %q: %s", k, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			bad("node-labels", "label %q value %q: %s", k, v, strings.Join(msgs, "; "))
		}
	}
	if _, err := o.taints(); err != nil {
		bad("register-with-taints", "%v", err)
	}
	if o.NodeLeaseDurationSeconds <= 0 {
		bad("node-lease-duration-seconds", "must be positive, got %d", o.NodeLeaseDurationSeconds)
	}
	if _, _, err := o.memoryLimit(); err != nil {
		bad("memory-limit", "%v", err)
	}
	if o.PodSyncWorkers <= 0 {
		bad("pod-sync-workers", "must be positive, got %d", o.PodSyncWorkers)
	}
	o.validateKubeletAPI(bad)
	if len(errs) > 0 {
		return fmt.Errorf("invalid options:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// nodeName is --hostname-override, or the lowercased hostname as the kubelet does.
func (o *options) nodeName() (string, error) {
	if o.HostnameOverride != "" {
		return o.HostnameOverride, nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("node name: %w (set --hostname-override)", err)
	}
	return strings.ToLower(strings.TrimSpace(h)), nil
}

// taints parses key=value:Effect or key:Effect, as the kubelet's --register-with-taints.
func (o *options) taints() ([]corev1.Taint, error) {
	var taints []corev1.Taint
	for _, s := range o.RegisterWithTaints {
		kv, effect, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("taint %q: want key=value:Effect or key:Effect", s)
		}
		key, value, _ := strings.Cut(kv, "=")
		t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", s, effect)
		}
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return nil, fmt.Errorf("taint %q: key: %s", s, strings.Join(msgs, "; "))
		}
		taints = append(taints, t)
	}
	return taints, nil
}

// memoryLimit parses --memory-limit: the limit in bytes (0: none), and whether it is automatic.
func (o *options) memoryLimit() (limit int64, auto bool, err error) {
	switch o.MemoryLimit {
	case "auto":
		return memlimit.Budget(o.MaxPods), true, nil
	case "none", "0":
		return 0, false, nil
	}
	q, err := resource.ParseQuantity(o.MemoryLimit)
	if err != nil || q.Sign() <= 0 {
		return 0, false, fmt.Errorf("%q is not auto, none or a positive quantity such as 256Mi", o.MemoryLimit)
	}
	return q.Value(), false, nil
}

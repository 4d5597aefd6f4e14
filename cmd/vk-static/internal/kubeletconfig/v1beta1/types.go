package v1beta1

import (
	"encoding/json"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupVersion is the configuration's apiVersion.
const GroupVersion = "kubelet.config.k8s.io/v1beta1"

// KubeletConfiguration is upstream's, field for field (see its documentation for each); the
// json.RawMessage fields, from EnableServer on, are those vk-static does not use.
type KubeletConfiguration struct {
	metav1.TypeMeta                  `json:",inline"`
	StaticPodPath                    string                `json:"staticPodPath,omitempty"`
	SyncFrequency                    metav1.Duration       `json:"syncFrequency,omitempty"`
	FileCheckFrequency               metav1.Duration       `json:"fileCheckFrequency,omitempty"`
	HTTPCheckFrequency               metav1.Duration       `json:"httpCheckFrequency,omitempty"`
	StaticPodURL                     string                `json:"staticPodURL,omitempty"`
	StaticPodURLHeader               map[string][]string   `json:"staticPodURLHeader,omitempty"`
	Address                          string                `json:"address,omitempty"`
	Port                             int32                 `json:"port,omitempty"`
	TLSCertFile                      string                `json:"tlsCertFile,omitempty"`
	TLSPrivateKeyFile                string                `json:"tlsPrivateKeyFile,omitempty"`
	TLSCipherSuites                  []string              `json:"tlsCipherSuites,omitempty"`
	TLSMinVersion                    string                `json:"tlsMinVersion,omitempty"`
	Authentication                   KubeletAuthentication `json:"authentication"`
	Authorization                    KubeletAuthorization  `json:"authorization"`
	EventRecordQPS                   *int32                `json:"eventRecordQPS,omitempty"`
	EventBurst                       int32                 `json:"eventBurst,omitempty"`
	HealthzPort                      *int32                `json:"healthzPort,omitempty"`
	HealthzBindAddress               string                `json:"healthzBindAddress,omitempty"`
	ClusterDomain                    string                `json:"clusterDomain,omitempty"`
	PodLogsDir                       string                `json:"podLogsDir,omitempty"`
	ClusterDNS                       []string              `json:"clusterDNS,omitempty"`
	ResolverConfig                   *string               `json:"resolvConf,omitempty"`
	StreamingConnectionIdleTimeout   metav1.Duration       `json:"streamingConnectionIdleTimeout,omitempty"`
	NodeStatusUpdateFrequency        metav1.Duration       `json:"nodeStatusUpdateFrequency,omitempty"`
	NodeStatusReportFrequency        metav1.Duration       `json:"nodeStatusReportFrequency,omitempty"`
	NodeLeaseDurationSeconds         int32                 `json:"nodeLeaseDurationSeconds,omitempty"`
	ImageGCHighThresholdPercent      *int32                `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent       *int32                `json:"imageGCLowThresholdPercent,omitempty"`
	ImageMinimumGCAge                metav1.Duration       `json:"imageMinimumGCAge,omitempty"`
	CgroupRoot                       string                `json:"cgroupRoot,omitempty"`
	CgroupsPerQOS                    *bool                 `json:"cgroupsPerQOS,omitempty"`
	CgroupDriver                     string                `json:"cgroupDriver,omitempty"`
	MaxPods                          int32                 `json:"maxPods,omitempty"`
	PodPidsLimit                     *int64                `json:"podPidsLimit,omitempty"`
	SingleProcessOOMKill             *bool                 `json:"singleProcessOOMKill,omitempty"`
	NodeStatusMaxImages              *int32                `json:"nodeStatusMaxImages,omitempty"`
	KubeAPIQPS                       *int32                `json:"kubeAPIQPS,omitempty"`
	KubeAPIBurst                     int32                 `json:"kubeAPIBurst,omitempty"`
	EvictionHard                     map[string]string     `json:"evictionHard,omitempty"`
	EvictionSoft                     map[string]string     `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod          map[string]string     `json:"evictionSoftGracePeriod,omitempty"`
	EvictionPressureTransitionPeriod metav1.Duration       `json:"evictionPressureTransitionPeriod,omitempty"`
	EvictionMaxPodGracePeriod        int32                 `json:"evictionMaxPodGracePeriod,omitempty"`
	EvictionMinimumReclaim           map[string]string     `json:"evictionMinimumReclaim,omitempty"`
	ContainerLogMaxSize              string                `json:"containerLogMaxSize,omitempty"`
	ContainerLogMaxFiles             *int32                `json:"containerLogMaxFiles,omitempty"`
	SystemReserved                   map[string]string     `json:"systemReserved,omitempty"`
	KubeReserved                     map[string]string     `json:"kubeReserved,omitempty"`
	AllowedUnsafeSysctls             []string              `json:"allowedUnsafeSysctls,omitempty"`
	EnableProfilingHandler           *bool                 `json:"enableProfilingHandler,omitempty"`
	RegisterWithTaints               []corev1.Taint        `json:"registerWithTaints,omitempty"`
	ContainerRuntimeEndpoint         string                `json:"containerRuntimeEndpoint"`
	ImageServiceEndpoint             string                `json:"imageServiceEndpoint,omitempty"`

	// Graceful node shutdown (nodeshutdown).
	ShutdownGracePeriod              metav1.Duration                    `json:"shutdownGracePeriod,omitempty"`
	ShutdownGracePeriodCriticalPods  metav1.Duration                    `json:"shutdownGracePeriodCriticalPods,omitempty"`
	ShutdownGracePeriodByPodPriority []ShutdownGracePeriodByPodPriority `json:"shutdownGracePeriodByPodPriority,omitempty"`

	// Not used by vk-static.
	EnableServer                              json.RawMessage `json:"enableServer,omitempty"`
	ReadOnlyPort                              json.RawMessage `json:"readOnlyPort,omitempty"`
	TLSCurvePreferences                       json.RawMessage `json:"tlsCurvePreferences,omitempty"`
	RotateCertificates                        json.RawMessage `json:"rotateCertificates,omitempty"`
	ServerTLSBootstrap                        json.RawMessage `json:"serverTLSBootstrap,omitempty"`
	RegistryPullQPS                           json.RawMessage `json:"registryPullQPS,omitempty"`
	RegistryBurst                             json.RawMessage `json:"registryBurst,omitempty"`
	ImagePullCredentialsVerificationPolicy    json.RawMessage `json:"imagePullCredentialsVerificationPolicy,omitempty"`
	PreloadedImagesVerificationAllowlist      json.RawMessage `json:"preloadedImagesVerificationAllowlist,omitempty"`
	EnableDebuggingHandlers                   json.RawMessage `json:"enableDebuggingHandlers,omitempty"`
	EnableContentionProfiling                 json.RawMessage `json:"enableContentionProfiling,omitempty"`
	OOMScoreAdj                               json.RawMessage `json:"oomScoreAdj,omitempty"`
	ImageMaximumGCAge                         json.RawMessage `json:"imageMaximumGCAge,omitempty"`
	VolumeStatsAggPeriod                      json.RawMessage `json:"volumeStatsAggPeriod,omitempty"`
	KubeletCgroups                            json.RawMessage `json:"kubeletCgroups,omitempty"`
	SystemCgroups                             json.RawMessage `json:"systemCgroups,omitempty"`
	CPUManagerPolicy                          json.RawMessage `json:"cpuManagerPolicy,omitempty"`
	CPUManagerPolicyOptions                   json.RawMessage `json:"cpuManagerPolicyOptions,omitempty"`
	CPUManagerReconcilePeriod                 json.RawMessage `json:"cpuManagerReconcilePeriod,omitempty"`
	MemoryManagerPolicy                       json.RawMessage `json:"memoryManagerPolicy,omitempty"`
	TopologyManagerPolicy                     json.RawMessage `json:"topologyManagerPolicy,omitempty"`
	TopologyManagerScope                      json.RawMessage `json:"topologyManagerScope,omitempty"`
	TopologyManagerPolicyOptions              json.RawMessage `json:"topologyManagerPolicyOptions,omitempty"`
	QOSReserved                               json.RawMessage `json:"qosReserved,omitempty"`
	RuntimeRequestTimeout                     json.RawMessage `json:"runtimeRequestTimeout,omitempty"`
	HairpinMode                               json.RawMessage `json:"hairpinMode,omitempty"`
	PodCIDR                                   json.RawMessage `json:"podCIDR,omitempty"`
	RunOnce                                   json.RawMessage `json:"runOnce,omitempty"`
	CPUCFSQuota                               json.RawMessage `json:"cpuCFSQuota,omitempty"`
	CPUCFSQuotaPeriod                         json.RawMessage `json:"cpuCFSQuotaPeriod,omitempty"`
	MaxOpenFiles                              json.RawMessage `json:"maxOpenFiles,omitempty"`
	ContentType                               json.RawMessage `json:"contentType,omitempty"`
	SerializeImagePulls                       json.RawMessage `json:"serializeImagePulls,omitempty"`
	MaxParallelImagePulls                     json.RawMessage `json:"maxParallelImagePulls,omitempty"`
	MergeDefaultEvictionSettings              json.RawMessage `json:"mergeDefaultEvictionSettings,omitempty"`
	PodsPerCore                               json.RawMessage `json:"podsPerCore,omitempty"`
	EnableControllerAttachDetach              json.RawMessage `json:"enableControllerAttachDetach,omitempty"`
	ProtectKernelDefaults                     json.RawMessage `json:"protectKernelDefaults,omitempty"`
	MakeIPTablesUtilChains                    json.RawMessage `json:"makeIPTablesUtilChains,omitempty"`
	IPTablesMasqueradeBit                     json.RawMessage `json:"iptablesMasqueradeBit,omitempty"`
	IPTablesDropBit                           json.RawMessage `json:"iptablesDropBit,omitempty"`
	FeatureGates                              json.RawMessage `json:"featureGates,omitempty"`
	FailSwapOn                                json.RawMessage `json:"failSwapOn,omitempty"`
	MemorySwap                                json.RawMessage `json:"memorySwap,omitempty"`
	ContainerLogMaxWorkers                    json.RawMessage `json:"containerLogMaxWorkers,omitempty"`
	ContainerLogMonitorInterval               json.RawMessage `json:"containerLogMonitorInterval,omitempty"`
	ConfigMapAndSecretChangeDetectionStrategy json.RawMessage `json:"configMapAndSecretChangeDetectionStrategy,omitempty"`
	ReservedSystemCPUs                        json.RawMessage `json:"reservedSystemCPUs,omitempty"`
	ShowHiddenMetricsForVersion               json.RawMessage `json:"showHiddenMetricsForVersion,omitempty"`
	SystemReservedCgroup                      json.RawMessage `json:"systemReservedCgroup,omitempty"`
	KubeReservedCgroup                        json.RawMessage `json:"kubeReservedCgroup,omitempty"`
	EnforceNodeAllocatable                    json.RawMessage `json:"enforceNodeAllocatable,omitempty"`
	VolumePluginDir                           json.RawMessage `json:"volumePluginDir,omitempty"`
	ProviderID                                json.RawMessage `json:"providerID,omitempty"`
	KernelMemcgNotification                   json.RawMessage `json:"kernelMemcgNotification,omitempty"`
	Logging                                   json.RawMessage `json:"logging,omitempty"`
	EnableSystemLogHandler                    json.RawMessage `json:"enableSystemLogHandler,omitempty"`
	EnableSystemLogQuery                      json.RawMessage `json:"enableSystemLogQuery,omitempty"`
	CrashLoopBackOff                          json.RawMessage `json:"crashLoopBackOff,omitempty"`
	ReservedMemory                            json.RawMessage `json:"reservedMemory,omitempty"`
	EnableDebugFlagsHandler                   json.RawMessage `json:"enableDebugFlagsHandler,omitempty"`
	SeccompDefault                            json.RawMessage `json:"seccompDefault,omitempty"`
	MemoryThrottlingFactor                    json.RawMessage `json:"memoryThrottlingFactor,omitempty"`
	MemoryReservationPolicy                   json.RawMessage `json:"memoryReservationPolicy,omitempty"`
	RegisterNode                              json.RawMessage `json:"registerNode,omitempty"`
	Tracing                                   json.RawMessage `json:"tracing,omitempty"`
	LocalStorageCapacityIsolation             json.RawMessage `json:"localStorageCapacityIsolation,omitempty"`
	FailCgroupV1                              json.RawMessage `json:"failCgroupV1,omitempty"`
	UserNamespaces                            json.RawMessage `json:"userNamespaces,omitempty"`
}

// ShutdownGracePeriodByPodPriority is the shutdown grace period of the pods of at least a
// priority (and below the next band's).
type ShutdownGracePeriodByPodPriority struct {
	Priority                   int32 `json:"priority"`
	ShutdownGracePeriodSeconds int64 `json:"shutdownGracePeriodSeconds"`
}

// KubeletAuthorizationMode is the kubelet API's authorization mode, AlwaysAllow or Webhook.
type KubeletAuthorizationMode string

// KubeletAuthorization is the kubelet API's authorization settings.
type KubeletAuthorization struct {
	Mode    KubeletAuthorizationMode    `json:"mode,omitempty"`
	Webhook KubeletWebhookAuthorization `json:"webhook"`
}

// KubeletWebhookAuthorization is how long Webhook authorization caches SubjectAccessReview answers.
type KubeletWebhookAuthorization struct {
	CacheAuthorizedTTL   metav1.Duration `json:"cacheAuthorizedTTL,omitempty"`
	CacheUnauthorizedTTL metav1.Duration `json:"cacheUnauthorizedTTL,omitempty"`
}

// KubeletAuthentication is the kubelet API's authentication settings.
type KubeletAuthentication struct {
	X509      KubeletX509Authentication      `json:"x509"`
	Webhook   KubeletWebhookAuthentication   `json:"webhook"`
	Anonymous KubeletAnonymousAuthentication `json:"anonymous"`
}

// KubeletX509Authentication is client certificate authentication.
type KubeletX509Authentication struct {
	ClientCAFile string `json:"clientCAFile,omitempty"`
}

// KubeletWebhookAuthentication is bearer token authentication through TokenReview.
type KubeletWebhookAuthentication struct {
	Enabled  *bool           `json:"enabled,omitempty"`
	CacheTTL metav1.Duration `json:"cacheTTL,omitempty"`
}

// KubeletAnonymousAuthentication is whether unauthenticated requests are let through as system:anonymous.
type KubeletAnonymousAuthentication struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// UsedFields are the top-level keys of a configuration file that vk-static uses: apiVersion,
// kind and the typed fields' JSON keys.
func UsedFields() map[string]bool {
	used := map[string]bool{"apiVersion": true, "kind": true}
	for f := range reflect.TypeFor[KubeletConfiguration]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && f.Type != reflect.TypeFor[json.RawMessage]() {
			used[name] = true
		}
	}
	return used
}

package app

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
)

// redactedHeaderValue replaces the manifest URL's header values in /configz, those of
// --manifest-url-header-file as much as --manifest-url-header's: they are often credentials
// (Authorization: Bearer …), and nodes/configz is not meant to hand them out.
const redactedHeaderValue = "<redacted>"

// kubeletConfiguration is what the agent runs with as the KubeletConfiguration the kubelet
// serves on /configz: every field vk-static reads (applyConfigFile's, so that the answer is
// itself a config file vk-static takes), from the options after flags, config file and
// defaults — the address as the API listens on it — except the manifest URL's header values.
func (o *options) kubeletConfiguration() kubeletv1beta1.KubeletConfiguration {
	var header map[string][]string
	if h, err := o.manifestHeader(); err == nil && len(h) > 0 {
		header = map[string][]string{}
		for name, values := range h {
			for range values {
				header[name] = append(header[name], redactedHeaderValue)
			}
		}
	}
	var taints []corev1.Taint
	if t, err := o.taints(); err == nil {
		taints = t
	}
	return kubeletv1beta1.KubeletConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeletv1beta1.GroupVersion, Kind: "KubeletConfiguration"},

		StaticPodPath:      o.PodManifestPath,
		StaticPodURL:       o.ManifestURL,
		StaticPodURLHeader: header,
		FileCheckFrequency: metav1.Duration{Duration: o.FileCheckFrequency},
		HTTPCheckFrequency: metav1.Duration{Duration: o.HTTPCheckFrequency},
		SyncFrequency:      metav1.Duration{Duration: o.SyncFrequency},
		PodLogsDir:         o.PodLogsDir,

		Address:                o.listenAddress(),
		Port:                   o.Port,
		HealthzBindAddress:     o.HealthzBindAddress,
		HealthzPort:            ptr.To(o.HealthzPort),
		EnableProfilingHandler: ptr.To(o.Profiling),

		KubeAPIQPS:     ptr.To(int32(o.KubeAPIQPS)),
		KubeAPIBurst:   o.KubeAPIBurst,
		EventRecordQPS: ptr.To(int32(o.EventQPS)),
		EventBurst:     o.EventBurst,

		MaxPods:                   o.MaxPods,
		NodeStatusUpdateFrequency: metav1.Duration{Duration: o.NodeStatusUpdateFrequency},
		NodeStatusReportFrequency: metav1.Duration{Duration: o.NodeStatusReportFrequency},
		NodeLeaseDurationSeconds:  o.NodeLeaseDurationSeconds,
		NodeStatusMaxImages:       ptr.To(o.NodeStatusMaxImages),
		RegisterWithTaints:        taints,
		SystemReserved:            o.Process.SystemReserved,
		KubeReserved:              o.Process.KubeReserved,
		ContainerLogMaxSize:       o.Process.ContainerLogMaxSize,
		ContainerLogMaxFiles:      ptr.To(o.Process.ContainerLogMaxFiles),
		AllowedUnsafeSysctls:      o.AllowedUnsafeSysctls,
		CgroupRoot:                o.Process.Cgroups.CgroupRoot,
		CgroupsPerQOS:             ptr.To(o.Process.Cgroups.CgroupsPerQOS),
		CgroupDriver:              o.Process.Cgroups.CgroupDriver,
		PodPidsLimit:              ptr.To(o.Process.Cgroups.PodPidsLimit),
		SingleProcessOOMKill:      ptr.To(o.Process.Cgroups.SingleProcessOOMKill),

		ContainerRuntimeEndpoint:    o.CRI.RuntimeEndpoint,
		ImageServiceEndpoint:        o.CRI.ImageEndpoint,
		ImageGCHighThresholdPercent: ptr.To(o.CRI.ImageGCHighThreshold),
		ImageGCLowThresholdPercent:  ptr.To(o.CRI.ImageGCLowThreshold),
		ImageMinimumGCAge:           metav1.Duration{Duration: o.CRI.ImageMinimumGCAge},
		ClusterDomain:               o.ClusterDomain,
		ClusterDNS:                  o.ClusterDNS,
		ResolverConfig:              ptr.To(o.ResolvConf),

		EvictionHard:                     o.NodeHealth.EvictionHard,
		EvictionSoft:                     o.NodeHealth.EvictionSoft,
		EvictionSoftGracePeriod:          o.NodeHealth.EvictionSoftGracePeriod,
		EvictionMinimumReclaim:           o.NodeHealth.EvictionMinimumReclaim,
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: o.NodeHealth.EvictionPressureTransitionPeriod},
		EvictionMaxPodGracePeriod:        o.NodeHealth.EvictionMaxPodGracePeriod,

		ShutdownGracePeriod:              metav1.Duration{Duration: o.Shutdown.GracePeriod},
		ShutdownGracePeriodCriticalPods:  metav1.Duration{Duration: o.Shutdown.GracePeriodCriticalPods},
		ShutdownGracePeriodByPodPriority: o.shutdownByPodPriority(),

		TLSCertFile:       o.TLSCertFile,
		TLSPrivateKeyFile: o.TLSPrivateKeyFile,
		TLSMinVersion:     o.TLSMinVersion,
		TLSCipherSuites:   o.TLSCipherSuites,
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: o.ClientCAFile},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(o.AnonymousAuth)},
			Webhook: kubeletv1beta1.KubeletWebhookAuthentication{
				Enabled:  ptr.To(o.AuthenticationTokenWebhook),
				CacheTTL: metav1.Duration{Duration: o.AuthenticationTokenWebhookCacheTTL},
			},
		},
		Authorization: kubeletv1beta1.KubeletAuthorization{
			Mode: kubeletv1beta1.KubeletAuthorizationMode(o.AuthorizationMode),
			Webhook: kubeletv1beta1.KubeletWebhookAuthorization{
				CacheAuthorizedTTL:   metav1.Duration{Duration: o.AuthorizationWebhookCacheAuthorizedTTL},
				CacheUnauthorizedTTL: metav1.Duration{Duration: o.AuthorizationWebhookCacheUnauthorizedTTL},
			},
		},
		StreamingConnectionIdleTimeout: metav1.Duration{Duration: o.StreamingConnectionIdleTimeout},
	}
}

// listenAddress is the kubelet API's address as api.Config defaults it: every address with
// an API server to reach it, loopback standalone.
func (o *options) listenAddress() string {
	switch {
	case o.Address != "":
		return o.Address
	case o.Kubeconfig == "":
		return "127.0.0.1"
	}
	return "0.0.0.0"
}

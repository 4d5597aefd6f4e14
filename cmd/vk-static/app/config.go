package app

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	kubeletv1beta1 "github.com/vk-static/vk-static/cmd/vk-static/internal/kubeletconfig/v1beta1"
)

// applyConfigFile reads a KubeletConfiguration and applies the fields vk-static understands to
// o, except where the flag was given on the command line (flags win, as with the kubelet).
// Unknown fields and invalid values are errors naming the field; valid kubelet fields that
// vk-static does not use are logged, their values not checked (kubeletconfig/v1beta1).
func applyConfigFile(path string, o *options, fs *pflag.FlagSet) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	var cfg kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	if cfg.APIVersion != "kubelet.config.k8s.io/v1beta1" || cfg.Kind != "KubeletConfiguration" {
		return fmt.Errorf("--config %s: apiVersion %q kind %q: want kubelet.config.k8s.io/v1beta1 KubeletConfiguration",
			path, cfg.APIVersion, cfg.Kind)
	}
	set := func(flag string, apply func()) {
		if !fs.Changed(flag) {
			apply()
		}
	}
	if cfg.StaticPodPath != "" {
		set("pod-manifest-path", func() { o.PodManifestPath = cfg.StaticPodPath })
	}
	if cfg.StaticPodURL != "" {
		set("manifest-url", func() { o.ManifestURL = cfg.StaticPodURL })
	}
	if len(cfg.StaticPodURLHeader) > 0 {
		set("manifest-url-header", func() {
			o.ManifestURLHeader = nil
			for name, values := range cfg.StaticPodURLHeader {
				for _, v := range values {
					o.ManifestURLHeader = append(o.ManifestURLHeader, name+":"+v)
				}
			}
		})
	}
	if cfg.FileCheckFrequency.Duration != 0 {
		set("file-check-frequency", func() { o.FileCheckFrequency = cfg.FileCheckFrequency.Duration })
	}
	if cfg.HTTPCheckFrequency.Duration != 0 {
		set("http-check-frequency", func() { o.HTTPCheckFrequency = cfg.HTTPCheckFrequency.Duration })
	}
	if cfg.PodLogsDir != "" {
		set("pod-logs-dir", func() { o.PodLogsDir = cfg.PodLogsDir })
	}
	if cfg.SyncFrequency.Duration != 0 {
		set("sync-frequency", func() { o.SyncFrequency = cfg.SyncFrequency.Duration })
	}
	if cfg.Address != "" {
		set("address", func() { o.Address = cfg.Address })
	}
	if cfg.Port != 0 {
		set("port", func() { o.Port = cfg.Port })
	}
	if cfg.HealthzBindAddress != "" {
		set("healthz-bind-address", func() { o.HealthzBindAddress = cfg.HealthzBindAddress })
	}
	if cfg.HealthzPort != nil {
		set("healthz-port", func() { o.HealthzPort = *cfg.HealthzPort })
	}
	if cfg.KubeAPIQPS != nil {
		set("kube-api-qps", func() { o.KubeAPIQPS = float32(*cfg.KubeAPIQPS) })
	}
	if cfg.KubeAPIBurst != 0 {
		set("kube-api-burst", func() { o.KubeAPIBurst = cfg.KubeAPIBurst })
	}
	if cfg.EventRecordQPS != nil {
		set("event-qps", func() { o.EventQPS = float32(*cfg.EventRecordQPS) })
	}
	if cfg.EventBurst != 0 {
		set("event-burst", func() { o.EventBurst = cfg.EventBurst })
	}
	if cfg.MaxPods != 0 {
		set("max-pods", func() { o.MaxPods = cfg.MaxPods })
	}
	if cfg.NodeStatusUpdateFrequency.Duration != 0 {
		set("node-status-update-frequency", func() { o.NodeStatusUpdateFrequency = cfg.NodeStatusUpdateFrequency.Duration })
	}
	switch {
	case cfg.NodeStatusReportFrequency.Duration != 0:
		set("node-status-report-frequency", func() { o.NodeStatusReportFrequency = cfg.NodeStatusReportFrequency.Duration })
	case cfg.NodeStatusUpdateFrequency.Duration != 0:
		// The kubelet's defaulting, for configurations older than the report frequency: a file
		// that sets only the update frequency reports at it.
		set("node-status-report-frequency", func() { o.NodeStatusReportFrequency = cfg.NodeStatusUpdateFrequency.Duration })
	}
	if cfg.NodeStatusMaxImages != nil {
		set("node-status-max-images", func() { o.NodeStatusMaxImages = *cfg.NodeStatusMaxImages })
	}
	if cfg.NodeLeaseDurationSeconds != 0 {
		set("node-lease-duration-seconds", func() { o.NodeLeaseDurationSeconds = cfg.NodeLeaseDurationSeconds })
	}
	if len(cfg.RegisterWithTaints) > 0 {
		set("register-with-taints", func() {
			o.RegisterWithTaints = nil
			for _, t := range cfg.RegisterWithTaints {
				s := t.Key
				if t.Value != "" {
					s += "=" + t.Value
				}
				o.RegisterWithTaints = append(o.RegisterWithTaints, s+":"+string(t.Effect))
			}
		})
	}
	if cfg.EnableProfilingHandler != nil {
		set("profiling", func() { o.Profiling = *cfg.EnableProfilingHandler })
	}
	if len(cfg.SystemReserved) > 0 {
		set("system-reserved", func() { o.Process.SystemReserved = cfg.SystemReserved })
	}
	if len(cfg.KubeReserved) > 0 {
		set("kube-reserved", func() { o.Process.KubeReserved = cfg.KubeReserved })
	}
	if cfg.ContainerLogMaxSize != "" {
		set("container-log-max-size", func() { o.Process.ContainerLogMaxSize = cfg.ContainerLogMaxSize })
	}
	if cfg.ContainerLogMaxFiles != nil {
		set("container-log-max-files", func() { o.Process.ContainerLogMaxFiles = *cfg.ContainerLogMaxFiles })
	}
	if cfg.ClusterDomain != "" {
		set("cluster-domain", func() { o.ClusterDomain = cfg.ClusterDomain })
	}
	if len(cfg.ClusterDNS) > 0 {
		set("cluster-dns", func() { o.ClusterDNS = cfg.ClusterDNS })
	}
	if cfg.ResolverConfig != nil {
		set("resolv-conf", func() { o.ResolvConf = *cfg.ResolverConfig })
	}
	applyKubeletAPIConfig(&cfg, o, set)
	applyCRIConfig(&cfg, o, set)
	applyEvictionConfig(&cfg, o, set)
	applySysctlConfig(&cfg, o, set)
	applyCgroupConfig(&cfg, o, set)
	if err := applyShutdownConfig(&cfg, o); err != nil {
		return fmt.Errorf("--config %s: %w", path, err)
	}
	if ignored := ignoredConfigFields(data); len(ignored) > 0 {
		// Valid kubelet settings that mean nothing here: say so rather than fail, so that a
		// kubelet's config file can be reused as is.
		klog.Background().Info("Ignoring KubeletConfiguration fields vk-static does not use", "config", path, "fields", strings.Join(ignored, ","))
	}
	return nil
}

// supportedConfigFields are the KubeletConfiguration keys vk-static applies.
var supportedConfigFields = kubeletv1beta1.UsedFields()

// ignoredConfigFields lists the top-level keys of a KubeletConfiguration file that are valid
// for the kubelet but that vk-static does not use, sorted.
func ignoredConfigFields(data []byte) []string {
	var fields map[string]any
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return nil // the strict decode already reported it
	}
	var ignored []string
	for k := range fields {
		if !supportedConfigFields[k] {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	return ignored
}

package kubelet

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Options is what Config and Args need to know: vk-static's flags as vkbench gives them, in
// the kubelet's terms.
type Options struct {
	Node         string // --hostname-override
	NodeIP       string // not loopback: the kubelet refuses it
	Address      string // the kubelet API's
	Port         int
	HealthzAddr  string // /healthz (the kubelet serves no /readyz)
	HealthzPort  int
	ManifestDir  string // staticPodPath
	RootDir      string // --root-dir; Config's file, pod logs, certificates and plugins under it
	Kubeconfig   string // the node identity (system:node:<Node>, a client certificate)
	ClientCAFile string // the CA of the API server's kubelet client certificate
	// RuntimeEndpoint is the CRI endpoint, unix://…, for runtime and images both.
	RuntimeEndpoint string
	MaxPods         int
	// QPS and Burst limit the kubelet's API client. The kubelet cannot turn its limiter off
	// (QPS < 0 is invalid, 0 means client-go's default of 5): QPS ≤ 0 is given as Burst, which
	// for the bench's loads is no limit.
	QPS       float64
	Burst     int
	Verbosity int
}

// The frequencies the bench's vk-static runs with by default, which are the kubelet's too:
// Config states them so that a change of the kubelet's defaults shows here.
const (
	fileCheckFrequency        = 20 * time.Second // vk-static's sources.DefaultFileCheckFrequency
	syncFrequency             = time.Minute      // node.DefaultSyncFrequency
	nodeStatusUpdateFrequency = 10 * time.Second
	nodeStatusReportFrequency = 5 * time.Minute
)

// ConfigPath is where Args expects Config: in the root directory.
func (o Options) ConfigPath() string { return filepath.Join(o.RootDir, "kubelet.yaml") }

// PodLogsDir is where the kubelet asks the runtime to write container logs: under the root
// directory, not the machine's /var/log/pods.
func (o Options) PodLogsDir() string { return filepath.Join(o.RootDir, "pod-logs") }

// Config is the kubelet's configuration file (YAML) for o.
func Config(o Options) ([]byte, error) {
	qps := o.QPS
	if qps <= 0 {
		qps = float64(o.Burst)
	}
	c := kubeletv1beta1.KubeletConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		// This machine: cgroup v1 (the kubelet refuses it by default since 1.35), cgroupfs as
		// containerd's runc (SystemdCgroup = false), no QoS or node-allocatable cgroups (the
		// kubelet would create them at the machine's cgroup root), swap on.
		FailCgroupV1:           ptr.To(false),
		CgroupDriver:           "cgroupfs",
		CgroupsPerQOS:          ptr.To(false),
		EnforceNodeAllocatable: []string{}, // see Config's map: omitempty drops an empty list
		FailSwapOn:             ptr.To(false),

		ContainerRuntimeEndpoint: o.RuntimeEndpoint,
		ImageServiceEndpoint:     o.RuntimeEndpoint,
		StaticPodPath:            o.ManifestDir,
		PodLogsDir:               o.PodLogsDir(),
		VolumePluginDir:          filepath.Join(o.RootDir, "volume-plugins"),

		Address:            o.Address,
		Port:               int32(o.Port),
		ReadOnlyPort:       0,
		HealthzBindAddress: o.HealthzAddr,
		HealthzPort:        ptr.To(int32(o.HealthzPort)),
		// As a real node: client certificates of ClientCAFile, bearer tokens through
		// TokenReview, every request authorized by SubjectAccessReview — as vk-static does.
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: o.ClientCAFile},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization: kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},

		MaxPods:                   int32(o.MaxPods),
		KubeAPIQPS:                ptr.To(int32(qps)),
		KubeAPIBurst:              int32(o.Burst),
		FileCheckFrequency:        metav1.Duration{Duration: fileCheckFrequency},
		SyncFrequency:             metav1.Duration{Duration: syncFrequency},
		NodeStatusUpdateFrequency: metav1.Duration{Duration: nodeStatusUpdateFrequency},
		NodeStatusReportFrequency: metav1.Duration{Duration: nodeStatusReportFrequency},
	}
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	// Fields whose zero value the kubelet defaults to something else, which omitempty would
	// leave out: an empty enforceNodeAllocatable (the default enforces "pods"), readOnlyPort 0
	// (stated, though 0 is the default of a configuration file).
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["enforceNodeAllocatable"] = []string{}
	m["readOnlyPort"] = 0
	out, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("kubelet configuration: %w", err)
	}
	return out, nil
}

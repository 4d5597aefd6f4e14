package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// configzArgs give every flag that has a KubeletConfiguration field a value other than its
// default (TestConfigzRoundTrip checks that none is missing).
var configzArgs = []string{
	"--pod-manifest-path", "/m", "--manifest-url", "http://x/m", "--manifest-url-header", "Authorization:Bearer secret-token",
	"--pod-logs-dir", "/run/pod-logs", "--file-check-frequency", "3s", "--http-check-frequency", "4s", "--sync-frequency", "5s",
	"--address", "10.0.0.1", "--port", "1234", "--healthz-bind-address", "10.0.0.2", "--healthz-port", "1235", "--profiling",
	"--kube-api-qps", "3", "--kube-api-burst", "4", "--event-qps", "5", "--event-burst", "6", "--max-pods", "7",
	"--node-status-update-frequency", "8s", "--node-status-report-frequency", "10s", "--node-lease-duration-seconds", "9", "--register-with-taints", "k=v:NoSchedule",
	"--system-reserved", "cpu=100m", "--kube-reserved", "cpu=200m", "--container-log-max-size", "1Mi", "--container-log-max-files", "3",
	"--tls-cert-file", "/c", "--tls-private-key-file", "/k", "--tls-min-version", "VersionTLS13", "--tls-cipher-suites", "TLS_AES_128_GCM_SHA256",
	"--client-ca-file", "/ca", "--anonymous-auth", "--authentication-token-webhook=false", "--authentication-token-webhook-cache-ttl", "3s",
	"--authorization-mode", "AlwaysAllow", "--authorization-webhook-cache-authorized-ttl", "4s", "--authorization-webhook-cache-unauthorized-ttl", "5s",
	"--streaming-connection-idle-timeout", "6m",
	"--container-runtime-endpoint", "unix:///c.sock", "--image-service-endpoint", "unix:///i.sock",
	"--image-gc-high-threshold", "90", "--image-gc-low-threshold", "70", "--minimum-image-ttl-duration", "5m0s",
	"--cluster-domain", "cluster.example", "--cluster-dns", "10.96.0.10,fd00::a", "--resolv-conf", "/run/resolv.conf",
	"--cgroup-root", "/vk", "--cgroups-per-qos=false", "--cgroup-driver", "cgroupfs", "--pod-pids-limit", "100", "--single-process-oom-kill",
	"--allowed-unsafe-sysctls", "kernel.msg*,net.core.somaxconn",
	"--eviction-hard", "memory.available<1Gi", "--eviction-soft", "memory.available<2Gi", "--eviction-soft-grace-period", "memory.available=1m",
	"--eviction-minimum-reclaim", "memory.available=100Mi", "--eviction-pressure-transition-period", "1m",
	"--eviction-max-pod-grace-period", "20",
	"--node-status-max-images", "11",
}

// What /configz serves is the configuration the agent runs with: read back as a --config file,
// it gives the same options — every flag with a KubeletConfiguration field — except the manifest
// URL's header values, which it does not give away.
func TestConfigzRoundTrip(t *testing.T) {
	given := map[string]bool{}
	for _, arg := range configzArgs {
		if name, ok := strings.CutPrefix(arg, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			given[name] = true
		}
	}
	for flagName := range kubeletConfigFields {
		assert.True(t, given[flagName], "configzArgs must set --%s (it has a KubeletConfiguration field)", flagName)
	}
	running, err := parse(t, configzArgs...)
	require.NoError(t, err)

	data, err := yaml.Marshal(running.kubeletConfiguration())
	require.NoError(t, err)
	assert.NotContains(t, string(data), "secret-token")
	reread, err := parse(t, "--config", writeFile(t, "configz.yaml", string(data)))
	require.NoError(t, err, "%s", data)

	assert.Equal(t, []string{"Authorization:" + redactedHeaderValue}, reread.ManifestURLHeader)
	reread.ManifestURLHeader = running.ManifestURLHeader
	reread.Config = ""
	assert.Equal(t, running, reread, "%s", data)
}

// The kubelet's shape: the KubeletConfiguration with its apiVersion and kind, the defaults
// filled in, and the address the API listens on rather than an empty one.
func TestConfigzDefaults(t *testing.T) {
	o, err := parse(t, "--kubeconfig", "/k")
	require.NoError(t, err)
	c, why := o.kubeletAPI()
	require.Empty(t, why)
	raw, err := json.Marshal(map[string]any{"kubeletconfig": c.Configz})
	require.NoError(t, err)
	var got struct {
		KubeletConfig map[string]any `json:"kubeletconfig"`
	}
	require.NoError(t, json.Unmarshal(raw, &got))
	for field, want := range map[string]any{
		"apiVersion":                     "kubelet.config.k8s.io/v1beta1",
		"kind":                           "KubeletConfiguration",
		"address":                        "0.0.0.0",
		"port":                           float64(10250),
		"streamingConnectionIdleTimeout": "4h0m0s",
		"syncFrequency":                  "1m0s",
		"nodeStatusUpdateFrequency":      "10s",
		"nodeStatusReportFrequency":      "5m0s",
		"authorization":                  map[string]any{"mode": "Webhook", "webhook": map[string]any{"cacheAuthorizedTTL": "5m0s", "cacheUnauthorizedTTL": "30s"}},
	} {
		assert.Equal(t, want, got.KubeletConfig[field], field)
	}
	assert.NotContains(t, got.KubeletConfig, "staticPodURLHeader", "none given")

	standalone, err := parse(t, "--anonymous-auth", "--authorization-mode", "AlwaysAllow")
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", standalone.kubeletConfiguration().Address)
}

// --streaming-connection-idle-timeout reaches the kubelet API: its default is the kubelet's 4h,
// 0 is never (api.Config's negative), and it cannot be negative.
func TestStreamingConnectionIdleTimeout(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		want time.Duration
	}{{"", 4 * time.Hour}, {"90s", 90 * time.Second}, {"0", -1}} {
		args := []string{"--kubeconfig", "/k"}
		if tc.arg != "" {
			args = append(args, "--streaming-connection-idle-timeout", tc.arg)
		}
		o, err := parse(t, args...)
		require.NoError(t, err)
		c, _ := o.kubeletAPI()
		assert.Equal(t, tc.want, c.StreamingConnectionIdleTimeout, tc.arg)
	}
	_, err := parse(t, "--kubeconfig", "/k", "--streaming-connection-idle-timeout", "-1s")
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "--streaming-connection-idle-timeout: must not be negative"), "%v", err)
}

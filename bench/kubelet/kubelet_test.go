package kubelet

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func testOptions() Options {
	return Options{
		Node: "n1", NodeIP: "10.213.0.1", Address: "10.213.0.1", Port: 10250,
		HealthzAddr: "127.0.0.1", HealthzPort: 10248,
		ManifestDir: "/w/n1/manifests", RootDir: "/w/n1/root", Kubeconfig: "/w/n1/kubeconfig", ClientCAFile: "/ca.crt",
		RuntimeEndpoint: "unix:///c/containerd.sock", MaxPods: 150, QPS: -1, Burst: 1000, Verbosity: 1,
	}
}

// The configuration decodes strictly as a KubeletConfiguration and holds what this machine
// needs; the fields whose zero value the kubelet would default otherwise are written out.
func TestConfig(t *testing.T) {
	data, err := Config(testOptions())
	require.NoError(t, err)
	var c kubeletv1beta1.KubeletConfiguration
	require.NoError(t, yaml.UnmarshalStrict(data, &c), "%s", data)

	assert.Equal(t, "KubeletConfiguration", c.Kind)
	assert.False(t, *c.FailCgroupV1)
	assert.Equal(t, "cgroupfs", c.CgroupDriver)
	assert.False(t, *c.CgroupsPerQOS)
	assert.False(t, *c.FailSwapOn)
	assert.Contains(t, string(data), "enforceNodeAllocatable: []\n")
	assert.Contains(t, string(data), "readOnlyPort: 0\n")
	assert.Equal(t, "unix:///c/containerd.sock", c.ContainerRuntimeEndpoint)
	assert.Equal(t, "unix:///c/containerd.sock", c.ImageServiceEndpoint)
	assert.Equal(t, "/w/n1/manifests", c.StaticPodPath)
	assert.Equal(t, "/w/n1/root/pod-logs", c.PodLogsDir)
	assert.Equal(t, "/w/n1/root/volume-plugins", c.VolumePluginDir)
	assert.Equal(t, "10.213.0.1", c.Address)
	assert.EqualValues(t, 10250, c.Port)
	assert.Equal(t, "127.0.0.1", c.HealthzBindAddress)
	assert.EqualValues(t, 10248, *c.HealthzPort)
	assert.Equal(t, "/ca.crt", c.Authentication.X509.ClientCAFile)
	assert.True(t, *c.Authentication.Webhook.Enabled)
	assert.False(t, *c.Authentication.Anonymous.Enabled)
	assert.Equal(t, kubeletv1beta1.KubeletAuthorizationModeWebhook, c.Authorization.Mode)
	assert.EqualValues(t, 150, c.MaxPods)
	assert.EqualValues(t, 1000, *c.KubeAPIQPS, "no client-side limit asked: QPS = burst")
	assert.EqualValues(t, 1000, c.KubeAPIBurst)
	assert.Equal(t, fileCheckFrequency, c.FileCheckFrequency.Duration)
}

func TestConfigQPS(t *testing.T) {
	o := testOptions()
	o.QPS = 50
	data, err := Config(o)
	require.NoError(t, err)
	var c kubeletv1beta1.KubeletConfiguration
	require.NoError(t, yaml.UnmarshalStrict(data, &c))
	assert.EqualValues(t, 50, *c.KubeAPIQPS)
}

func TestArgs(t *testing.T) {
	o := testOptions()
	assert.Equal(t, []string{"/bin/kubelet",
		"--config", "/w/n1/root/kubelet.yaml",
		"--kubeconfig", "/w/n1/kubeconfig",
		"--hostname-override", "n1",
		"--node-ip", "10.213.0.1",
		"--root-dir", "/w/n1/root",
		"--cert-dir", "/w/n1/root/pki",
		"--v", "1",
	}, Args("/bin/kubelet", o))
}

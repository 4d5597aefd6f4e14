package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// hostsMountOf is the mount at /etc/hosts of container name's newest instance, nil for none.
func hostsMountOf(h *harness, name string) *Mount {
	for _, m := range h.rt.config(name).Mounts {
		if m.ContainerPath == "/etc/hosts" {
			return &m
		}
	}
	return nil
}

// TestManagedEtcHosts: on a runtime with images every container gets the kubelet's /etc/hosts
// — for a pod on a network of its own, localhost, the pod's address with its hostname and the
// hostAliases; for a pod on the host's network, the node's file and the hostAliases — unless
// it mounts a volume there itself.
func TestManagedEtcHosts(t *testing.T) {
	h, _ := newImageHarness(t, nil)
	h.rt.mu.Lock()
	h.rt.podIP = "10.88.0.7"
	h.rt.mu.Unlock()
	aliases := []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"foo.local", "bar.local"}}, {IP: "10.1.2.4", Hostnames: []string{"baz"}}}

	own := testPod("hosts1", corev1.RestartPolicyAlways, corev1.Container{Name: "main", Image: "local:1"})
	own.Spec.Hostname = "web"
	own.Spec.HostAliases = aliases
	require.NoError(t, h.p.CreatePod(context.Background(), own))
	h.eventually(own.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	m := hostsMountOf(h, "main")
	require.NotNil(t, m, "a hosts file bound at /etc/hosts")
	assert.Equal(t, filepath.Join(h.root, "pods", "hosts1", "etc-hosts"), m.HostPath)
	assert.False(t, m.ReadOnly)
	data, err := os.ReadFile(m.HostPath)
	require.NoError(t, err)
	assert.Equal(t, "# Kubernetes-managed hosts file.\n"+
		"127.0.0.1\tlocalhost\n"+
		"::1\tlocalhost ip6-localhost ip6-loopback\n"+
		"fe00::0\tip6-localnet\n"+
		"fe00::0\tip6-mcastprefix\n"+
		"fe00::1\tip6-allnodes\n"+
		"fe00::2\tip6-allrouters\n"+
		"10.88.0.7\tweb\n"+
		"\n# Entries added by HostAliases.\n"+
		"10.1.2.3\tfoo.local\tbar.local\n"+
		"10.1.2.4\tbaz\n", string(data))
	info, err := os.Stat(m.HostPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())

	host := testPod("hosts2", corev1.RestartPolicyAlways, corev1.Container{Name: "host", Image: "local:1"})
	host.Spec.HostNetwork = true
	host.Spec.HostAliases = aliases[:1]
	require.NoError(t, h.p.CreatePod(context.Background(), host))
	h.eventually(host.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	m = hostsMountOf(h, "host")
	require.NotNil(t, m)
	node, err := os.ReadFile("/etc/hosts")
	require.NoError(t, err)
	data, err = os.ReadFile(m.HostPath)
	require.NoError(t, err)
	assert.Equal(t, "# Kubernetes-managed hosts file (host network).\n"+string(node)+
		"\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n", string(data))

	own3 := testPod("hosts3", corev1.RestartPolicyAlways, corev1.Container{Name: "mounts", Image: "local:1",
		VolumeMounts: []corev1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}})
	own3.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	require.NoError(t, h.p.CreatePod(context.Background(), own3))
	h.eventually(own3.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	m = hostsMountOf(h, "mounts")
	require.NotNil(t, m)
	assert.NotContains(t, m.HostPath, "etc-hosts", "the container's own volume, not the managed file")
}

// TestNoManagedEtcHostsForHostCommands: a runtime of host commands has no root filesystem of
// its containers' own to put a hosts file in.
func TestNoManagedEtcHostsForHostCommands(t *testing.T) {
	h := newHarness(t)
	pod := testPod("hosts4", corev1.RestartPolicyAlways, ctr("main", "sleep", "1000"))
	require.NoError(t, h.p.CreatePod(context.Background(), pod))
	h.eventually(pod.UID, "Running", func(s *corev1.PodStatus) bool { return s.Phase == corev1.PodRunning })
	assert.Nil(t, hostsMountOf(h, "main"))
}

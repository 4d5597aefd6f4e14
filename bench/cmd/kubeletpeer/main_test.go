package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vk-static/vk-static/bench/kubelet"
)

// vkbench's command line for an agent: agentproc's defaults (loopback addresses), then the
// scenario's and the namespace's flags, which win.
func TestParse(t *testing.T) {
	binary, o, err := parse([]string{
		"--hostname-override", "n1",
		"--node-ip", "127.0.0.1", "--address", "127.0.0.1", "--port", "4001",
		"--healthz-bind-address", "127.0.0.1", "--healthz-port", "4002",
		"--pod-manifest-path", "/w/manifests", "--root-dir", "/w/root", "--provider", "mock",
		"--kubeconfig", "/w/kubeconfig", "--client-ca-file", "/ca.crt",
		"--max-pods", "150", "--kube-api-qps", "-1", "--kube-api-burst", "1000", "--profiling", "-v", "1",
		"--provider", "cri", "--container-runtime-endpoint", "unix:///c.sock",
		"--node-ip", "10.213.0.1", "--address", "10.213.0.1",
		"--kubelet", "/bin/kubelet",
	})
	require.NoError(t, err)
	assert.Equal(t, "/bin/kubelet", binary)
	assert.Equal(t, kubelet.Options{
		Node: "n1", NodeIP: "10.213.0.1", Address: "10.213.0.1", Port: 4001,
		HealthzAddr: "127.0.0.1", HealthzPort: 4002, ManifestDir: "/w/manifests", RootDir: "/w/root",
		Kubeconfig: "/w/kubeconfig", ClientCAFile: "/ca.crt", RuntimeEndpoint: "unix:///c.sock",
		MaxPods: 150, QPS: -1, Burst: 1000, Verbosity: 1,
	}, o)
}

func TestParseRequired(t *testing.T) {
	_, _, err := parse([]string{"--hostname-override", "n1"})
	assert.ErrorContains(t, err, "is required")
	_, _, err = parse([]string{"--kubelet", "k", "extra"})
	assert.ErrorContains(t, err, "unexpected arguments")
}

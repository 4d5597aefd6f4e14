package agentflags

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bench's command line for an agent: agentproc's loopback defaults, then the bench's and a
// scenario's flags, which win (a flag given twice takes the later value). What is not given
// keeps the caller's default.
func TestRegisterReadsTheBenchCommandLine(t *testing.T) {
	f := Defaults()
	f.NodeIP = "127.0.0.2" // a peer's own default
	fs := flag.NewFlagSet("peer", flag.ContinueOnError)
	f.Register(fs)
	require.NoError(t, fs.Parse([]string{
		"--hostname-override", "n1", "--node-ip", "127.0.0.1", "--address", "127.0.0.1", "--port", "4001",
		"--healthz-bind-address", "127.0.0.1", "--healthz-port", "4002",
		"--pod-manifest-path", "/w/manifests", "--root-dir", "/w/root", "--provider", "mock",
		"--kubeconfig", "/w/kubeconfig", "--client-ca-file", "/ca.crt",
		"--max-pods", "150", "--kube-api-qps", "50", "--kube-api-burst", "100", "--profiling", "-v", "3",
		"--provider", "cri", "--container-runtime-endpoint", "unix:///c.sock",
		"--node-ip", "10.213.0.1",
	}))
	assert.Equal(t, Flags{
		Kubeconfig: "/w/kubeconfig", Node: "n1", NodeIP: "10.213.0.1", Address: "127.0.0.1", Port: 4001,
		HealthzAddr: "127.0.0.1", HealthzPort: 4002, ManifestDir: "/w/manifests", RootDir: "/w/root",
		ClientCAFile: "/ca.crt", Provider: "cri", RuntimeEndpoint: "unix:///c.sock",
		MaxPods: 150, QPS: 50, Burst: 100, Verbosity: 3, Profiling: true,
	}, f)

	g := Defaults()
	g.NodeIP = "127.0.0.2"
	fs = flag.NewFlagSet("peer", flag.ContinueOnError)
	g.Register(fs)
	require.NoError(t, fs.Parse([]string{"--hostname-override", "n2"}))
	want := Defaults()
	want.Node, want.NodeIP = "n2", "127.0.0.2"
	assert.Equal(t, want, g, "a flag not given keeps its default")
}

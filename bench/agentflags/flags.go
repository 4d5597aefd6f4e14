package agentflags

import "flag"

// Flags are vk-static's flags that the bench passes, by their vk-static meaning.
type Flags struct {
	Kubeconfig      string  // --kubeconfig: the node identity
	Node            string  // --hostname-override: the node name
	NodeIP          string  // --node-ip: the Node's InternalIP
	Address         string  // --address: the kubelet API's
	Port            int     // --port: the kubelet API's
	HealthzAddr     string  // --healthz-bind-address: where /healthz, /readyz (and pprof) are served
	HealthzPort     int     // --healthz-port
	ManifestDir     string  // --pod-manifest-path: the static pods' directory
	RootDir         string  // --root-dir: the agent's state
	ClientCAFile    string  // --client-ca-file: the CA of the API server's kubelet client certificate
	Provider        string  // --provider: what runs the pods
	RuntimeEndpoint string  // --container-runtime-endpoint: the CRI endpoint, unix://…
	MaxPods         int     // --max-pods
	QPS             float64 // --kube-api-qps: the API client's rate; -1 for no client-side limit
	Burst           int     // --kube-api-burst
	Verbosity       int     // -v: the log verbosity
	Profiling       bool    // --profiling: serve /debug/pprof (vk-static on its kubelet API, the peers on the healthz address)
}

// Defaults are vk-static's defaults of the flags, with the healthz address on loopback and no
// client-side rate limit, as the bench runs every agent.
func Defaults() Flags {
	return Flags{Port: 10250, HealthzAddr: "127.0.0.1", HealthzPort: 10248, MaxPods: 110, QPS: -1, Burst: 1000, Verbosity: 1}
}

// Register defines every flag on fs, into f, with f's values as their defaults.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", f.Kubeconfig, "the node identity's kubeconfig")
	fs.StringVar(&f.Node, "hostname-override", f.Node, "the node name")
	fs.StringVar(&f.NodeIP, "node-ip", f.NodeIP, "the Node's InternalIP")
	fs.StringVar(&f.Address, "address", f.Address, "the kubelet API's address")
	fs.IntVar(&f.Port, "port", f.Port, "the kubelet API's port")
	fs.StringVar(&f.HealthzAddr, "healthz-bind-address", f.HealthzAddr, "the healthz endpoint's address")
	fs.IntVar(&f.HealthzPort, "healthz-port", f.HealthzPort, "the healthz endpoint's port")
	fs.StringVar(&f.ManifestDir, "pod-manifest-path", f.ManifestDir, "the static pods' directory")
	fs.StringVar(&f.RootDir, "root-dir", f.RootDir, "the agent's state directory")
	fs.StringVar(&f.ClientCAFile, "client-ca-file", f.ClientCAFile, "the CA of the API server's kubelet client certificate")
	fs.StringVar(&f.Provider, "provider", f.Provider, "what runs the pods (vk-static's)")
	fs.StringVar(&f.RuntimeEndpoint, "container-runtime-endpoint", f.RuntimeEndpoint, "the CRI endpoint (unix://…)")
	fs.IntVar(&f.MaxPods, "max-pods", f.MaxPods, "the node's pods capacity")
	fs.Float64Var(&f.QPS, "kube-api-qps", f.QPS, "the API client's rate (-1: no client-side limit)")
	fs.IntVar(&f.Burst, "kube-api-burst", f.Burst, "the API client's burst")
	fs.IntVar(&f.Verbosity, "v", f.Verbosity, "the log verbosity")
	fs.BoolVar(&f.Profiling, "profiling", f.Profiling, "serve /debug/pprof on the healthz address")
}

package kwok

// Options is what Args needs to know.
type Options struct {
	Kubeconfig    string // an identity KWOK's controllers may use: they list and watch leases, which a node identity may not
	Node          string // the one node KWOK manages
	ServerAddress string // host:port for /healthz, /readyz and /debug/pprof
	ConfigPath    string // a file holding Config()
	NodeIP        string // the node's InternalIP and the pods' host IP; empty means 127.0.0.1
}

// Args is KWOK's command line, argv[0] included, for one node with the stages of Config and
// KWOK's defaults otherwise (unthrottled client, 40 s node lease, 4 workers per stage kind).
func Args(binary string, o Options) []string {
	ip := o.NodeIP
	if ip == "" {
		ip = "127.0.0.1"
	}
	return []string{binary,
		"--kubeconfig", o.Kubeconfig,
		"--config", o.ConfigPath,
		"--manage-single-node", o.Node,
		"--node-ip", ip,
		"--server-address", o.ServerAddress,
	}
}

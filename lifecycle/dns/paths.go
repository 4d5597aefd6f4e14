package dns

// HostResolvConf is the host's resolver configuration, the kubelet's --resolv-conf default and
// where a container's resolver reads its own. ResolvedResolvConf is systemd-resolved's list of
// the servers it forwards to, which a pod off the host's network uses when HostResolvConf names
// only resolvers on the host's loopback (Configurer.UpstreamResolvConf).
const (
	HostResolvConf     = "/etc/resolv.conf"
	ResolvedResolvConf = "/run/systemd/resolve/resolv.conf"
)

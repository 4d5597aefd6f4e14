package kubelet

import (
	"github.com/vk-static/vk-static/test/support/hostpaths"
)

// HostPaths are where the kubelet writes whatever its configuration and flags say: the
// device plugins' socket directory (/var/lib/kubelet/device-plugins, a constant of its
// device manager) and the symlinks to container logs (/var/log/containers, another). A run
// hides them behind empty tmpfs mounts in its own mount namespace (hostpaths.Mask), so that
// nothing of the kubelet's is left on the machine; the kubelet writes sockets and links there,
// little else.
var HostPaths = []hostpaths.Tmpfs{
	{Path: "/var/lib/kubelet", Mode: 0o755, Size: "64m"},
	{Path: "/var/log/containers", Mode: 0o755, Size: "64m"},
}

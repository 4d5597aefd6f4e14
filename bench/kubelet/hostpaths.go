package kubelet

import (
	"github.com/vk-static/vk-static/test/support/hostpaths"
)

// HostPaths are where the kubelet writes whatever its configuration and flags say: the
// device plugins' socket directory (/var/lib/kubelet/device-plugins, a constant of its
// device manager) and the symlinks to container logs (/var/log/containers, another). A run
// hides them behind empty tmpfs mounts in its own mount namespace (MaskHostPaths), so that
// nothing of the kubelet's is left on the machine.
var HostPaths = []string{"/var/lib/kubelet", "/var/log/containers"}

// MissingDirs is hostpaths.MissingDirs: what MaskHostPaths will create on the machine's
// filesystem and RemoveDirs removes afterwards. Call it before the run.
func MissingDirs(paths []string) []string { return hostpaths.MissingDirs(paths) }

// MaskHostPaths mounts an empty tmpfs (0755, 64 MiB: the kubelet writes sockets and links
// there, little else) on each of paths, creating the directory if need be, in the run's own
// mount namespace (hostpaths.Mask).
func MaskHostPaths(paths []string) error {
	for _, p := range paths {
		if err := hostpaths.Mask(hostpaths.Tmpfs{Path: p, Mode: 0o755, Size: "64m"}); err != nil {
			return err
		}
	}
	return nil
}

// RemoveDirs is hostpaths.RemoveDirs: it removes what MaskHostPaths created (dirs from
// MissingDirs) once the namespace and its mounts are gone.
func RemoveDirs(dirs []string) error { return hostpaths.RemoveDirs(dirs) }

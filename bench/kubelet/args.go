package kubelet

import (
	"path/filepath"
	"strconv"
)

// Args is the kubelet's command line, argv[0] included: the settings that are flags only
// (identity, node IP, directories) and Config's file for the rest.
func Args(binary string, o Options) []string {
	return []string{binary,
		"--config", o.ConfigPath(),
		"--kubeconfig", o.Kubeconfig,
		"--hostname-override", o.Node,
		"--node-ip", o.NodeIP,
		"--root-dir", o.RootDir,
		// The default is /var/lib/kubelet/pki, whatever --root-dir says: the self-signed
		// serving certificate goes with the rest.
		"--cert-dir", filepath.Join(o.RootDir, "pki"),
		"--v", strconv.Itoa(o.Verbosity),
	}
}

package volume

import (
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// The kubelet's plugin directory names (the plugin name with "/" escaped as "~"), so that a
// pod's directory reads the same as under a kubelet.
const (
	pluginEmptyDir    = "kubernetes.io~empty-dir"
	pluginConfigMap   = "kubernetes.io~configmap"
	pluginSecret      = "kubernetes.io~secret"
	pluginDownwardAPI = "kubernetes.io~downward-api"
	pluginProjected   = "kubernetes.io~projected"
)

// volumesDir is <PodsDir>/<uid>/volumes, everything Teardown removes.
func (m *Manager) volumesDir(uid types.UID) string {
	return filepath.Join(m.podsDir, string(uid), "volumes")
}

// volumeDir is where the volume name of plugin lives for pod uid.
func (m *Manager) volumeDir(uid types.UID, plugin, name string) string {
	return filepath.Join(m.volumesDir(uid), plugin, name)
}

package volume

import (
	"path/filepath"
	"strconv"

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

// subPathsDir is <PodsDir>/<uid>/volume-subpaths, where the pod's subPath mounts are bound
// (the kubelet's directory), beside its volumes and out of every container's reach.
func (m *Manager) subPathsDir(uid types.UID) string {
	return filepath.Join(m.podsDir, string(uid), "volume-subpaths")
}

// subPathTarget is the mount point of the index-th volumeMount of container, of volume:
// volume-subpaths/<volume>/<container>/<index>, as the kubelet's.
func (m *Manager) subPathTarget(uid types.UID, volume, container string, index int) string {
	return filepath.Join(m.subPathsDir(uid), volume, container, strconv.Itoa(index))
}

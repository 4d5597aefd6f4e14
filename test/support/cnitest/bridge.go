package cnitest

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
)

// PluginDirs are where distributions put the CNI plugins: Debian's containernetworking-plugins,
// and the upstream release's layout.
var PluginDirs = []string{"/usr/lib/cni", "/opt/cni/bin"}

// PluginDir is the first of PluginDirs that has the bridge plugin; "" when none has.
func PluginDir() string {
	for _, d := range PluginDirs {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			return d
		}
	}
	return ""
}

// WriteBridge writes into confDir the configuration of network name: the bridge link bridge
// (the pods' gateway, hairpin on), addresses of subnet from host-local, whose leases go under
// ipamDir, a default route, and host ports through portmap. It returns the leases' directory:
// a pod's address leased is a file there named by the address.
func WriteBridge(confDir, name, bridge string, subnet netip.Prefix, ipamDir string) (string, error) {
	type obj = map[string]any
	data, err := json.Marshal(obj{
		"cniVersion": "1.0.0", "name": name,
		"plugins": []obj{
			{"type": "bridge", "bridge": bridge, "isGateway": true, "hairpinMode": true, "ipam": obj{
				"type": "host-local", "dataDir": ipamDir,
				"ranges": [][]obj{{{"subnet": subnet.String()}}}, "routes": []obj{{"dst": "0.0.0.0/0"}},
			}},
			{"type": "portmap", "capabilities": obj{"portMappings": true}},
		},
	})
	if err != nil {
		return "", err
	}
	return filepath.Join(ipamDir, name), os.WriteFile(filepath.Join(confDir, "10-"+name+".conflist"), data, 0o644)
}

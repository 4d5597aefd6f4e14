package testcontainerd

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Bridge is a pod network of Debian's containernetworking-plugins, what almost every cluster
// has: a bridge link (the plugin "bridge", isGateway, hairpin), addresses from a range
// (host-local, its allocations under the instance's directory), host ports (portmap, with
// SNAT so that 127.0.0.1:hostPort reaches the pod too) and each pod's lo (loopback). Pods get
// an address of Subnet on their eth0, reachable from the node and from each other, with the
// default route through Gateway.
//
// The bridge and portmap's iptables rules are made in the network namespace containerd runs
// in, so Start refuses a Bridge in any namespace with a link besides lo and the network's own
// (the machine's has eth0): run the test in a network namespace of its own (test/support/netns).
// Stop deletes the bridge link.
type Bridge struct {
	// Name is the bridge link's name; "" is DefaultBridgeName.
	Name string
	// Subnet is the pods' addresses, e.g. 10.244.0.0/24 (a node's pod CIDR); required, IPv4.
	Subnet netip.Prefix
	// Gateway is the bridge's own address in Subnet; the zero value is Subnet's first address
	// (10.244.0.1).
	Gateway netip.Addr
}

// DefaultBridgeName is the bridge's link name when Bridge.Name is empty: the one the kubelet's
// documentation and most clusters use.
const DefaultBridgeName = "cni0"

// bridgePlugins are the plugins a Bridge network runs, copied into the instance's CNI bin
// directory.
var bridgePlugins = []string{"bridge", "host-local", "portmap", "loopback"}

// validate fills the defaults and checks the network.
func (b *Bridge) validate() error {
	if b.Name == "" {
		b.Name = DefaultBridgeName
	}
	if !b.Subnet.IsValid() || !b.Subnet.Addr().Is4() || b.Subnet.Bits() > 30 {
		return fmt.Errorf("testcontainerd: Bridge.Subnet %v: an IPv4 prefix of at most /30 is required", b.Subnet)
	}
	b.Subnet = b.Subnet.Masked()
	if !b.Gateway.IsValid() {
		b.Gateway = b.Subnet.Addr().Next()
	}
	if !b.Subnet.Contains(b.Gateway) {
		return fmt.Errorf("testcontainerd: Bridge.Gateway %v is not in Subnet %v", b.Gateway, b.Subnet)
	}
	return nil
}

// conflist is the CNI network configuration; ipamDir is host-local's dataDir.
func (b *Bridge) conflist(ipamDir string) ([]byte, error) {
	type obj = map[string]any
	return json.MarshalIndent(obj{
		"cniVersion": "0.4.0",
		"name":       bridgeNetworkName,
		"plugins": []obj{
			{
				"type": "bridge", "bridge": b.Name, "isGateway": true, "hairpinMode": true,
				"ipam": obj{
					"type":    "host-local",
					"ranges":  [][]obj{{{"subnet": b.Subnet.String(), "gateway": b.Gateway.String()}}},
					"routes":  []obj{{"dst": "0.0.0.0/0"}},
					"dataDir": ipamDir,
				},
			},
			{"type": "portmap", "capabilities": obj{"portMappings": true}, "snat": true},
		},
	}, "", "  ")
}

// onlyOwnLinks checks that this network namespace is one a test made: it has no link but lo
// and what a Bridge network of this name makes (the bridge, the pods' veths). The machine's
// has its own (eth0 at least); PID 1's namespace cannot be compared with here, since reading
// it needs more privileges than root has in some containers.
func onlyOwnLinks(bridge string) error {
	links, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.Name != "lo" && l.Name != bridge && !strings.HasPrefix(l.Name, "veth") {
			return fmt.Errorf("testcontainerd: a Bridge network only in a network namespace of the test's own (test/support/netns), never the machine's: this one has the link %s", l.Name)
		}
	}
	return nil
}

// copyPlugins copies each plugin from dir into binDir: containerd looks for them there only.
func copyPlugins(dir, binDir string, names []string) error {
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(binDir, name), data, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// deleteLink removes the bridge link (and with it what is attached to it); a link already
// gone is not an error.
func deleteLink(name string) error {
	ip, err := exec.LookPath("ip")
	if err != nil {
		for _, d := range sbinDirs {
			if _, statErr := os.Stat(filepath.Join(d, "ip")); statErr == nil {
				ip, err = filepath.Join(d, "ip"), nil
				break
			}
		}
	}
	if err != nil {
		return fmt.Errorf("delete the bridge %s: %w", name, err)
	}
	out, err := exec.Command(ip, "link", "delete", name).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "Cannot find device") {
		return fmt.Errorf("ip link delete %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// bridgeNetworkName is the CNI network's name: host-local keeps its allocations in a directory
// of that name under its dataDir.
const bridgeNetworkName = "vk-static-bridge"

// PodIPsInUse are the addresses the Bridge network has given and not taken back (host-local's
// allocations): a pod's address is released when its sandbox is stopped, so after the pods are
// gone there are none. Nil without a Bridge.
func (c *Containerd) PodIPsInUse() ([]netip.Addr, error) {
	if c.bridge == nil {
		return nil, nil
	}
	entries, err := os.ReadDir(filepath.Join(c.paths.IPAM, bridgeNetworkName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // nothing allocated yet
	}
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, e := range entries {
		if ip, err := netip.ParseAddr(e.Name()); err == nil { // not lock, last_reserved_ip.0
			out = append(out, ip)
		}
	}
	return out, nil
}

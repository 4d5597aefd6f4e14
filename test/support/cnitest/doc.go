// Package cnitest gives tests a pod network of the CNI plugins that Debian's
// containernetworking-plugins installs (make testbin installs it): where the plugins are, and
// the configuration of a bridge network — the bridge plugin, addresses from host-local, host
// ports through portmap — for a test that runs in a network namespace of its own
// (test/support/netns), where the bridge and portmap's rules are made.
//
//	bin := cnitest.PluginDir()
//	if bin == "" { t.Skip(...) }
//	leases, err := cnitest.WriteBridge(confDir, "pods", "vkpod0", netip.MustParsePrefix("10.245.0.0/24"), ipamDir)
package cnitest

// Package testcontainerd runs a throwaway containerd for the CRI tests: one per test package
// (TestMain), its configuration from this package (containerd.toml), its root, state, socket,
// runc state, network namespaces and CNI directories in a new temporary directory, and the
// sandbox image (SandboxImage, a testimage pause image) imported, so that pods run without any
// registry outside the machine. containerd and runc come from the distribution's packages:
// `make testbin` installs them; without them Start fails with ErrNotInstalled (a test failure
// with that hint, never a skip).
//
//	var cd *testcontainerd.Containerd
//
//	func TestMain(m *testing.M) { os.Exit(testcontainerd.Main(m, &cd)) }
//
//	func TestSomething(t *testing.T) {
//		rs, err := criclient.NewRemoteRuntimeService(ctx, cd.Endpoint(), 10*time.Second, nil, false)
//		err = testimage.Import(ctx, cd, "localhost/test/web:1", img)
//		...
//	}
//
// Without Options.LoopbackCNI or Options.Bridge there is no CNI network: only host-network
// sandboxes run (with an empty Hostname), and the runtime reports NetworkReady false. With
// LoopbackCNI, a loopback-only network makes NetworkReady true (the kubelet waits for it); pods
// still have only lo.
//
// With Options.Bridge, pods have a network of their own, as on a cluster: Debian's
// containernetworking-plugins (bridge with isGateway, host-local IPAM keeping its allocations
// in the instance's directory, portmap for hostPort, loopback) copied into the instance's CNI
// bin directory. A pod-network sandbox gets an address of Bridge.Subnet (its status's
// network IP), reachable from the node and from other pods; a host port answers on every
// address of the node, 127.0.0.1 included. The bridge link and portmap's iptables rules are
// made in the network namespace the test runs in, so Start refuses a Bridge in one with any
// link besides lo and the network's own: run the test in network and mount namespaces of its
// own (test/support/netns; TestBridgeNetwork shows how). PodIPsInUse lists the addresses not yet
// released (a sandbox stopped releases its own), for tests that check nothing was left:
//
//	if netns.InChild() {
//		err := netns.Enter(netns.NodeIP)
//		c, err := testcontainerd.Start(ctx, testcontainerd.Options{Bridge: &testcontainerd.Bridge{
//			Subnet: netip.MustParsePrefix("10.244.0.0/24"), // Gateway: 10.244.0.1, Name: "cni0"
//		}})
//		…
//	}
//
// Restart stops containerd and starts it on the same directories (Kill is the crash without
// the start), as the tests of a runtime restart under the agent need. Stop kills containerd by
// its PID and removes what the instance made, including what containerd 1.6 keeps outside
// its directories (the shims' sockets in /run/containerd/s), the pods' network namespaces
// (mounted under the instance's state directory, never /run/netns) and a Bridge's link; it
// fails if a shim of the instance survived. Containers' cgroups are removed by runc; parents of a sandbox's
// CgroupParent are the test's.
package testcontainerd

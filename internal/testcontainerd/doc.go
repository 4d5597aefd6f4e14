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
// Without Options.LoopbackCNI there is no CNI network: only host-network sandboxes run (with
// an empty Hostname), and the runtime reports NetworkReady false. With it, a loopback-only
// network makes NetworkReady true (the kubelet waits for it); pods still have only lo.
//
// Restart stops containerd and starts it on the same directories (Kill is the crash without
// the start), as the tests of a runtime restart under the agent need. Stop kills containerd by
// its PID and removes what the instance made, including what containerd 1.6 keeps outside
// its directories (the shims' sockets in /run/containerd/s); it fails if a shim of the
// instance survived. Containers' cgroups are removed by runc; parents of a sandbox's
// CgroupParent are the test's.
package testcontainerd

// Package kubelet runs the kubelet itself (k8s.io/kubernetes/cmd/kubelet, the release of the
// test control plane) as a peer of the bench's cri-50 scenario: the same 50 static pods, on a
// containerd of the same configuration, through the kubelet instead of vk-static (issue 16).
//
// Contract: Config is the KubeletConfiguration of a standalone kubelet on this kind of
// machine (cgroup v1 allowed, cgroupfs, no QoS cgroups, no node-allocatable enforcement, swap
// allowed), everything it writes under its root directory (pod logs, volume plugins), its
// static pods from its own manifest directory, its API served on a loopback-namespace address
// with webhook authentication and authorization as a real node's. Args is its command line
// (node identity, node IP, root and certificate directories). The kubelet refuses a loopback
// node IP, so it runs only in a network namespace with another address on lo (test/support/netns;
// vkbench -peers kubelet puts the whole run there), and it writes a few host paths whatever
// it is told (HostPaths), which hostpaths.Mask hides behind tmpfs mounts in the run's own mount
// namespace (hostpaths.MissingDirs and RemoveDirs take away the empty mount points it had to
// create).
// It leaves its root directory bind-mounted on itself: the bench detaches that
// (internal/mounts) before the directory is removed.
//
// The kubelet binary is built by the Makefile (make bench-full) from the separate module
// bench/kubelet/tools: its dependencies need go.sum entries the control plane's hack/tools
// lacks, and hack/tools/go.sum keys the cached control-plane build.
//
// bench/cmd/kubeletpeer puts these together behind the command line vkbench gives every peer
// (vk-static's flags), writes Config under --root-dir and replaces itself with the kubelet.
package kubelet

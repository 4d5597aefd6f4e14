// Package netns runs a process's work in network and mount namespaces of its own, with an
// address besides 127.0.0.1 on the namespace's lo, for what refuses or cannot use a loopback
// node address: kube-apiserver will not proxy nodes/proxy to one (test/e2enetns), and the
// kubelet will not run with one ("nodeIP can't be loopback address"; bench's cri-50 beside
// the kubelet). Nothing here touches the machine's own network or mounts.
//
// The parent re-executes itself (Command: clone with CLONE_NEWNET|CLONE_NEWNS and a
// Pdeathsig, so the child dies with it; root or CAP_SYS_ADMIN is needed, and Command's
// caller reports EPERM as such); the child calls Enter, which checks that it really is in
// namespaces other than its parent's, makes / private (mounts made there, the agents' and
// the kubelet's, never propagate back) and brings lo up with the address over rtnetlink — no
// iproute2, and no `ip netns exec`, which remounts /sys and hides the cgroup mounts. The
// namespaces disappear with the last process in them.
//
//	if netns.InChild() {
//		if err := netns.Enter(netns.NodeIP); err != nil { … }
//		… // everything binds 127.0.0.1 or NodeIP, here only
//		return
//	}
//	cmd, err := netns.Command(os.Args[1:], "MORE=env")
//	err = cmd.Run()
package netns

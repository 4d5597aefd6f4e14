// Package conformance runs the upstream Kubernetes e2e suite's node conformance specs
// (k8s.io/kubernetes/test/e2e v1.36.3, [NodeConformance] without [Serial], [Disruptive],
// [Slow], [Flaky] and [Feature:…]) against a one-node cluster whose node is the agent under
// test: vk-static (--provider cri, or process) or the kubelet of the same release as the
// reference. It is what `make conformance` runs (cmd/conformance), never part of `make test`:
// the kubelet takes about 15 minutes on two cores, and every spec an agent fails waits out a
// pod-start timeout.
//
// Run must be called in network and mount namespaces of the run's own (test/support/netns, with
// netns.NodeIP on lo: the kubelet refuses a loopback node address and the API server will not
// proxy to one). There it starts, and on return stops and removes, whatever happens:
//
//   - the look-alike images of what the specs pull (Images: busybox from Debian's
//     busybox-static, agnhost and nonewprivs built from their Go source, pause, nonroot, an
//     nginx that is busybox's httpd, …), pushed to a registry served in process on 127.0.0.1
//     (test/support/testimage), and KUBE_TEST_REPO_LIST mapping every upstream registry to it
//     (RepoList);
//   - a containerd with a bridge CNI network on the node's pod CIDR (test/support/testcontainerd's
//     Bridge: cni0, isGateway, host-local, portmap, loopback), its pods' network namespaces
//     under its own state directory;
//   - etcd, kube-apiserver (Node and RBAC authorization, NodeRestriction) and
//     kube-controller-manager with every default controller and node IPAM
//     (--allocate-node-cidrs, ClusterCIDR) from test/support/testenv, and kube-scheduler;
//   - the agent with a node identity (system:node:NAME, a client certificate of the cluster's
//     CA), its kubelet API on the node address's port 10250;
//   - ginkgo running e2e.test in parallel processes.
//
// It returns a Result (summary.json in Options.Out, beside ginkgo's junit_01.xml, e2e.log and
// every component's log): each selected spec's state, the totals and the suite's wall time.
//
//	r, err := conformance.Run(ctx, conformance.Options{Agent: conformance.AgentKubelet, BinDir: …, TestBin: …, Out: "out"})
//	fmt.Println(r.Verdict()) // conformance: kubelet at 1234567: 235 passed, 1 failed, 0 skipped of 236 specs in 15m0s
//
// The binaries come from the Go module test/conformance/tools (make conformance-bin), the
// control plane from hack/tools (make testbin).
package conformance

// Package e2enetns runs the end-to-end tests that need the API server to reach an agent at an
// address other than loopback: kube-apiserver refuses to proxy nodes/proxy (kubectl get --raw
// /api/v1/nodes/<node>/proxy/...) to a node whose address is a loopback one, and tests may
// bind and advertise no address of the machine's but 127.0.0.1.
//
// So TestMain re-executes the test binary in network and mount namespaces of its own
// (test/support/netns, which the bench's cri-50 beside the kubelet uses too; root, or
// CAP_SYS_ADMIN, is needed, and its absence is a failure, not a skip; the mount namespace,
// with / made private, keeps the tmpfs the agents mount for projected volumes off the
// machine's mounts).
// There the child brings lo up and gives it NodeIP (10.213.0.1/32) over rtnetlink — no
// iproute2 needed — and then starts the whole test control plane (test/support/testenv: etcd and
// kube-apiserver on the namespace's own 127.0.0.1), the agents (test/support/agentproc, with
// --node-ip and --address NodeIP) and kubectl. The address exists only in that namespace,
// which disappears with the last process in it; nothing leaves the machine. The parent builds
// the agent first (the child needs no network) and, once the child has exited, kills whatever
// container process the agents' process provider left under the work directory.
//
// This package starts a control plane of its own, besides test/e2e's: keep it to the tests
// that need the namespace.
package e2enetns

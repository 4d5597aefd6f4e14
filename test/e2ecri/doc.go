// Package e2ecri runs the built vk-static binary with --provider cri against a real control
// plane (test/support/testenv, the agent under its node identity) and a real, throwaway containerd
// (test/support/testcontainerd), one of each for the whole package, and checks issue 16's and
// issue 24's end-to-end behaviour as a user sees it: static and API pods from an image served
// by a registry on 127.0.0.1 (test/support/testimage), kubectl logs -f, exec, port-forward,
// /metrics/resource, image pull errors and their back-off, an agent killed with -9 and a
// containerd restarted under the agent, pods refused up front, and pods on a pod network —
// their addresses in the API server, hostPort through portmap, pod-to-pod traffic, probes to
// the pod's address, hostnames cut to 63 characters.
//
// The containerd has a bridge CNI network (testcontainerd's Bridge, 10.244.0.0/24), so TestMain
// builds the agent and runs the tests again in network and mount namespaces of their own
// (test/support/netns): the bridge, the pods' veths and portmap's rules exist there only, and
// whatever is left in the namespace when the tests end is killed and reported as a failure.
// Host-network pods share that namespace. The tests run one at a time: each checks that it
// left no sandbox, container, shim, mount (network namespaces included) or pod address in the
// shared containerd.
package e2ecri

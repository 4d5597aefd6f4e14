// Package e2ecri runs the built vk-static binary with --provider cri against a real control
// plane (internal/testenv, the agent under its node identity) and a real, throwaway containerd
// (internal/testcontainerd), one of each for the whole package, and checks issue 16's end-to-end
// behaviour as a user sees it: static and API pods from an image served by a registry on
// 127.0.0.1 (internal/testimage), kubectl logs -f, exec, port-forward, /metrics/resource, image
// pull errors and their back-off, an agent killed with -9 and a containerd restarted under the
// agent, and pods refused up front. Pods are host-network (the test containerd has no CNI
// network). The tests run one at a time: each checks that it left no sandbox, container, shim or
// mount in the shared containerd.
package e2ecri

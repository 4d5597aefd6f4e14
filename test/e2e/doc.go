// Package e2e runs the built vk-static binary as a separate process against a real etcd and
// kube-apiserver (test/support/testenv), with its node identity under the Node authorizer and
// NodeRestriction, and checks what a user sees: the Node, its Lease, mirror pods, API pods,
// events. The agent is built with the race detector for these tests; its own counters are read
// from its /metrics endpoint, never from inside the process.
package e2e

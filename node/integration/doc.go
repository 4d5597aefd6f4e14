// Package integration tests package node against a real kube-apiserver and etcd
// (test/support/testenv), as the node identity (system:node:<name>) under the Node authorizer and
// NodeRestriction admission: the NodeController registers the Node, renews its Lease and keeps
// fields others own; the PodController writes what a pod start costs and nothing more. It holds
// only tests, and lives apart from package node so that node's unit tests need no control plane.
//
//	go test -race ./node/integration
package integration

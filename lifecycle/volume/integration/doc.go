// Package integration tests package volume against a real kube-apiserver and etcd
// (test/support/testenv), as the node identity (system:node:<name>) under the Node authorizer and
// NodeRestriction admission: an API pod's kube-api-access-* volume, as the ServiceAccount
// admission injects it, is set up with a token the node requests for the pod through the
// TokenRequest API; and package nodeobjects' ServiceWatch lists and watches every
// namespace's Services as the node, for the service environment variables. It holds only tests, and lives apart from package volume so that volume's
// unit tests need no control plane.
//
//	go test -race ./lifecycle/volume/integration
package integration

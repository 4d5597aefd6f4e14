// Package integration tests kubeclient against a real kube-apiserver and etcd
// (test/support/testenv): every resource the agent uses makes a round trip in protobuf, the
// content type the agent's clients ask for. It holds only tests; it lives apart from package
// kubeclient so that kubeclient's unit tests need no control plane.
//
//	go test -race ./kubeclient/integration
package integration

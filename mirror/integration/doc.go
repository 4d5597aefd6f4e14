// Package integration tests mirror.Client against a real kube-apiserver and etcd
// (test/support/testenv) under production rules: the Node and RBAC authorizers and NodeRestriction
// admission, with the agent's node identity (system:node:<name>), never an admin. It holds
// only tests; it lives apart from package mirror so that mirror's unit tests need no control
// plane.
//
// The kubelet's acceptance tests of mirror pods (test/e2e_node/mirror_pod_test.go) are what these
// tests, mirror.TestDecide and podmanager's tests answer; each names the behaviours it covers,
// and the pod sync loop's tests exercise them end to end with a running agent. Two are not
// mirror behaviour and are left to the provider and the pod sync loop: EnvFiles, and "should
// not change container status" across a kubelet restart.
//
//	go test -race ./mirror/integration
package integration

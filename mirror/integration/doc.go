// Package integration tests mirror.Client against a real kube-apiserver and etcd
// (internal/testenv) under production rules: the Node and RBAC authorizers and NodeRestriction
// admission, with the agent's node identity (system:node:<name>), never an admin. It holds
// only tests; it lives apart from package mirror so that mirror's unit tests need no control
// plane.
//
//	go test -race ./mirror/integration
package integration

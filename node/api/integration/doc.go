// Package integration tests package api against a real kube-apiserver and etcd
// (test/support/testenv): the server asks the API server with the node's own identity
// (system:node:<name>, under the Node authorizer and RBAC) who a bearer token is (TokenReview)
// and whether a user may do what a request asks (SubjectAccessReview), and RBAC's answer decides
// between 401, 403 and the route. It holds only tests.
//
//	go test -race ./node/api/integration
package integration

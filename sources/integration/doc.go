// Package integration tests the sources against a real kube-apiserver (test/support/testenv), as
// the node identity. It is a separate package so that the control plane starts only for these
// tests, not for the unit tests and the fuzz target of package sources.
package integration

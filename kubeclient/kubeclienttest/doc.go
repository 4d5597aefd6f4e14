// Package kubeclienttest adapts client-go clientsets to kubeclient.Interface for tests: the
// fake clientset (k8s.io/client-go/kubernetes/fake) and the test control plane's real
// clientsets (test/support/testenv) serve tests that hand the agent a kubeclient.Interface.
// Production code never imports it: it links client-go's full clientset, which kubeclient
// exists to leave out.
package kubeclienttest

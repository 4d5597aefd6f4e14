// Package testenv starts a real etcd and kube-apiserver on 127.0.0.1 for integration and
// end-to-end tests, configured like a production cluster: the Node authorizer and RBAC,
// NodeRestriction admission, token and client-certificate authentication, service-account
// signing keys, and a kubelet client certificate so the API server can reach the agent with a
// verifiable identity. With Options.VerifyKubeletServingCerts the API server verifies the
// agents' serving certificates in turn (--kubelet-certificate-authority): an agent then serves
// a certificate from Env.IssueServingCert. With Options.KubeadmKubeletClient the API server's
// kubelet client is kubeadm's, in no group, and needs RBAC to use an agent's API. The API server
// accepts bootstrap tokens; with Options.ControllerManager, kube-controller-manager runs too
// (certificate signing with the test CA, approval, bootstrap tokens, service accounts) with
// kubeadm's bootstrap RBAC, so that an agent can join with a token from Env.BootstrapToken as a
// kubelet does — only the packages that need it pay for it.
//
// The binaries (kube-controller-manager included) are built from Go modules by `make testbin`
// (hack/tools); testenv finds them in $VK_STATIC_TESTBIN, or in the Makefile's default cache
// directory. Missing binaries are a test failure with a hint, never a skip. Env.Kubectl finds the kubectl built there (`make kubectl`)
// for tests that drive the cluster as a user does.
//
// One control plane serves a whole test package:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
//	func TestSomething(t *testing.T) {
//		ns := env.Namespace(t)                  // fresh namespace: default ServiceAccount, kube-root-ca.crt
//		node := env.NodeClient(t, "node-a")     // clientset with the identity system:node:node-a
//		...
//	}
//
// Stop kills both processes and removes the temporary directory; when the package's tests fail
// the directory, with both logs, is kept and its path printed.
package testenv

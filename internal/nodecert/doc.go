// Package nodecert gives the agent the credentials a kubelet obtains for itself: a client
// certificate for system:node:<name> requested with a bootstrap token (TLS bootstrapping),
// rotated before it expires, and optionally a serving certificate for the kubelet API signed by
// the cluster (signer kubernetes.io/kubelet-serving). It matches the kubelet's
// pkg/kubelet/certificate and its bootstrap package, built on client-go's certificate manager
// (k8s.io/client-go/util/certificate): the CSR loop, the file store and the rotation schedule
// are client-go's.
//
// Files in the certificate directory are the kubelet's: kubelet-client-current.pem (a symlink
// to the newest kubelet-client-<time>.pem, certificate and key, mode 0600), kubelet-server-*
// for the serving pair, and kubelet-client.key.tmp, the key of a bootstrap request still
// waiting, which a restarted agent reuses so that it finds its own request again.
//
// The smallest use, as cmd/vk-static does it:
//
//	err := nodecert.Bootstrap(ctx, nodecert.BootstrapConfig{
//		KubeconfigPath: "/etc/vk-static/node.kubeconfig", // written, pointing at the certificate
//		BootstrapKubeconfigPath: "/etc/vk-static/bootstrap.kubeconfig",
//		CertDir: "/var/lib/vk-static/pki", NodeName: "node-a",
//	})
//	base, _ := clientcmd.BuildConfigFromFlags("", "/etc/vk-static/node.kubeconfig")
//	m, _ := nodecert.NewClientManager(ctx, base, "/var/lib/vk-static/pki", "node-a")
//	m.Start(); defer m.Stop()
//	cfg, _ := nodecert.RotatingConfig(ctx, base, m) // use cfg for every client
//
// Bootstrap retries what may pass (a wrong or expired token: the API server answers
// Unauthorized; an API server not reachable yet) with back-off, logging an error that names
// --bootstrap-kubeconfig; it gives up at once on a request the cluster denied (ErrDenied),
// leaving no key or certificate behind.
package nodecert

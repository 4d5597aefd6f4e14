// Package nodecert gives the agent the credentials a kubelet obtains for itself: a client
// certificate for system:node:<name> requested with a bootstrap token (TLS bootstrapping),
// rotated before it expires, and optionally a serving certificate for the kubelet API signed by
// the cluster (signer kubernetes.io/kubelet-serving). It matches the kubelet's
// pkg/kubelet/certificate and its bootstrap package, which are built on client-go's
// util/certificate and util/certificate/csr. Those take a full clientset (kubernetes.Interface),
// whose scheme registers every API group and makes megabytes of the agent's resident pages, so
// nodecert has its own: the file store ([store]), the renewal schedule ([renewalDeadline]), the
// [Manager] and the request and its wait ([create], [waitForCertificate]), all through
// [CSRClient] — Create, Get and Watch of certificates.k8s.io/v1 requests, which client-go's typed
// client, its fake and kubeclient's satisfy.
//
// Behaviour is client-go's: renewal at a random point of 70–90 % of the certificate's lifetime,
// at once when there is none, when it is the bootstrap pair, or when it lacks a name or address
// now wanted; a failed renewal retried after 2 s doubling to 32 s; a request waited for 15
// minutes (the bootstrap's an hour), then a new one. Differences: only certificates.k8s.io/v1
// (no v1beta1 fallback, served since 1.19), and the wait reads and watches the one request
// instead of listing.
//
// Files in the certificate directory are the kubelet's, so that a directory either wrote is read
// by the other: kubelet-client-current.pem (a symlink to the newest kubelet-client-<time>.pem,
// certificate and key, mode 0600), kubelet-server-* for the serving pair, and
// kubelet-client.key.tmp, the key of a bootstrap request still waiting, which a restarted agent
// reuses so that it finds its own request again — unless that request is of no use (its
// certificate expired, another key signed it): then a new key makes a new request.
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
//	go m.Run(ctx) // renews until ctx ends
//	cfg, _ := nodecert.RotatingConfig(ctx, base, m) // use cfg for every client
//
// Bootstrap retries what may pass (a wrong or expired token: the API server answers
// Unauthorized; an API server not reachable yet) with back-off, logging an error that names
// --bootstrap-kubeconfig; it gives up at once on a request the cluster denied (ErrDenied),
// leaving no key or certificate behind.
package nodecert

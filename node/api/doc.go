// Package api serves the kubelet HTTP API (the routes the API server proxies for kubectl logs,
// exec, attach and port-forward, and that metrics-server scrapes) behind the kubelet's security
// model. This package is that security layer; the routes are added with Handle by their
// owners.
//
// The contract, the kubelet's own (cmd/kubelet/app/auth.go, pkg/kubelet/server):
//
//   - TLS always. The serving certificate comes from Config.TLSCertFile/TLSPrivateKeyFile, or is
//     self-signed for the node's names and addresses and kept in Config.CertDirectory, where a
//     restart reuses it while it is valid for those names. Both files are re-read when they
//     change (fsnotify, and every minute regardless, as k8s.io/apiserver's dynamiccertificates
//     does, which this package does not link: it brings in client-go's clientset), and so is
//     the client CA file; a file that does not load keeps the last good content.
//   - Authentication as k8s.io/apiserver's delegating authenticator does it: client
//     certificates signed by Config.ClientCAFile (requested, never required, at the TLS
//     handshake); bearer tokens (Authorization header or WebSocket protocol) through TokenReview
//     with Config.TokenReviews, no audiences, answers cached (default 2m) under the token's SHA-256,
//     failures not, calls failing with 429, 500, 504 or a reset retried with the kubelet's
//     backoff; anonymous requests only with Config.Anonymous, and only without credentials. No
//     credentials that work: 401 "Unauthorized".
//   - Authorization as k8s.io/apiserver's delegating authorizer does it: a SubjectAccessReview
//     with Config.SubjectAccessReviews (allowed answers cached 5m, denied 30s, failures not, retried like a
//     TokenReview) for resource nodes, name NodeName, a subresource chosen by the path as the
//     kubelet v1.36 chooses it (/stats stats, /metrics metrics, /logs log; /pods and
//     /runningpods pods, then proxy; /containerLogs, /exec, /attach, /portForward, /run and
//     everything else proxy) and the verb of the HTTP method (GET get, POST create, PUT update,
//     PATCH patch, DELETE delete; an upgrade by its method too, so a WebSocket exec is a get on
//     nodes/proxy, as in the kubelet), or AlwaysAllow when chosen explicitly. Denied: 403 "Forbidden (user=…, verb=…, resource=…,
//     subresource(s)=[…])", the kubelet's text; a review that fails: 500.
//   - Both are this package's own code over the node's client and k8s.io/apiserver's light
//     request packages (x509, bearertoken, websocket, union, group): the factories in
//     authenticatorfactory and authorizerfactory link CEL, the webhook plugins and the egress
//     selector into the agent, 10 MB of its binary (TestAgentLinksNoHeavyAuth keeps them out).
//   - Every route is behind both, including paths no route serves (they answer 404 once
//     authorized), so the API tells nobody unauthenticated what it serves. Tokens are never
//     logged; a route learns who called from UserFrom.
//
// With Config.LocalAdmin there is also a local administrator (package localadmin): a local CA
// in CertDirectory signs a client certificate, written there as a kubeconfig (0600) once the
// server listens, for the tools on the machine itself (vk-static pods, vk-static logs). That
// certificate, checked against the local CA alone, is authenticated beside ClientCAFile and
// allowed everything before the configured authorizer is consulted — with Webhook, without a
// SubjectAccessReview, as the API server does not know that user. Webhook without
// SubjectAccessReviews then allows the local administrator only, which is how a standalone
// agent serves by default.
//
// With the node's client for TokenReviews and SubjectAccessReviews (its own identity,
// system:node:<name>, is enough: the Node authorizer lets nodes create tokenreviews and
// subjectaccessreviews) token authentication and Webhook authorization are the defaults.
// Config takes only the Create method of each (TokenReviewClient, SubjectAccessReviewClient),
// which client-go's typed clients have, so this package links no clientset. Without them
// (standalone) only client certificates or anonymous requests can authenticate, and
// AlwaysAllow must be chosen.
//
// New checks the configuration and prepares the certificate, and starts nothing; Run listens,
// serves until its context ends, and returns once the server and the certificate reloader it
// started have stopped. A
// request's context ends with Run's, and a route must then return: Run cannot stop a hijacked
// (upgraded) connection for it. /healthz is not here: it stays on the plain healthz port.
// GET /configz is the server's own, when Config.Configz is given: the agent's configuration
// as {"kubeletconfig": …}, authorized as nodes/configz (or nodes/proxy) like the kubelet's.
// GET /debug/pprof/ is too, with Config.Profiling: net/http/pprof, authorized as nodes/proxy
// like the kubelet's, and only here — a profile and /debug/pprof/cmdline show what the agent's
// memory and command line hold, which the plain healthz port would give to anyone who reaches it.
//
// The smallest use, on a node with an API client:
//
//	srv, err := api.New(api.Config{
//		NodeName:             "edge-1",
//		TokenReviews:         clientset.AuthenticationV1().TokenReviews(), // system:node:edge-1
//		SubjectAccessReviews: clientset.AuthorizationV1().SubjectAccessReviews(),
//		Port:                 10250,
//		CertDirectory:        "/var/lib/vk-static/pki",
//		ClientCAFile:         "/etc/kubernetes/pki/ca.crt",
//	})
//	if err != nil { ... }
//	srv.Handle("/pods", podsHandler)
//	err = srv.Run(ctx) // until ctx is cancelled
package api

// Package localadmin is the kubelet API's local administrator: a credential the agent writes for
// the people and tools on its own machine (the vk-static CLI's `pods` and `logs`), so that a
// standalone agent — with no API server to issue or check credentials — can still serve its API
// only to someone who proved who they are. Loopback alone is no authentication: any local user
// and any container sharing the host's network can reach 127.0.0.1.
//
// The contract:
//
//   - EnsureAuthority keeps a local CA in a directory (local-admin-ca.crt and .key, 0600, the
//     directory 0700), reused across restarts while it is valid, replaced when it is not.
//   - Authority.WriteKubeconfig issues a client certificate for User in Group and writes it, with
//     the server's URL and serving certificate file, as a kubeconfig (local-admin.kubeconfig,
//     0600, replaced atomically). Whoever can read it is the local administrator: it is as
//     secret as the agent's own keys, and never leaves the machine.
//   - Authority.Authenticator authenticates that certificate only when the local CA signed it,
//     as a user value of this package's own type; IsLocalAdmin tells it apart, so that a
//     certificate from another CA (the cluster's --client-ca-file) or a token naming the same
//     user or group is never the local administrator.
//   - Authorizer allows the local administrator everything and has no opinion on anyone else:
//     put it before the configured authorizer (Webhook or AlwaysAllow). With Webhook the API
//     server is not asked about it, and does not know the user: it is local by design.
//   - ReadCredential (the client side) reads the kubeconfig, and Credential.TLSConfig verifies
//     the agent by the serving certificate file the kubeconfig names, read at each handshake so
//     that a renewed certificate is trusted as soon as the agent serves it.
//
// The smallest use, in the agent and in a client:
//
//	ca, err := localadmin.EnsureAuthority("/var/lib/vk-static/pki", time.Now())
//	// serve with ca.Authenticator() and localadmin.Authorizer() before the others, then:
//	err = ca.WriteKubeconfig("https://127.0.0.1:10250", "/var/lib/vk-static/pki/kubelet.crt", "node-1", time.Now())
//
//	cred, err := localadmin.ReadCredential("/var/lib/vk-static/pki")
//	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cred.TLSConfig()}}
//	resp, err := client.Get(cred.Server + "/pods")
package localadmin

// Package image holds the kubelet's rules for a container's image that do not depend on a
// runtime: the pull policy a container gets when it names none, and which credentials of a pod's
// image pull secrets apply to an image.
//
// PullPolicy is the API's defaulting: Always for an image tagged :latest or not tagged (and not
// pinned by digest), IfNotPresent otherwise. Static pods are defaulted the same way, so a manifest
// without imagePullPolicy behaves as it would in the API server.
//
// Keyring reads kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg secrets and Lookup
// returns, most specific first, the credentials whose registry key matches an image the way the
// kubelet's credential provider keyring matches them: the host (with * globs per label, the
// port exactly), then the key's path as a prefix of the image's path; an image without a
// registry host is Docker Hub's (index.docker.io, docker.io and registry-1.docker.io are one).
// The kubelet tries each in turn and pulls anonymously when none matches; the lifecycle does the
// same.
//
// Smallest use:
//
//	ring, err := image.NewKeyring(secrets) // the pod's imagePullSecrets, read with the node's identity
//	for _, cred := range ring.Lookup(c.Image) { /* try PullImage with cred */ }
package image

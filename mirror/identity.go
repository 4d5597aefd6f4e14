package mirror

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// IsMirrorOf reports whether mirrorPod is a current representation of the static pod: same
// name and namespace, and a ConfigMirrorAnnotationKey equal to the static pod's non-empty
// ConfigHashAnnotationKey. The spec is never compared: the hash already covers the manifest,
// and the API server defaults fields the manifest left out, so specs always differ.
func IsMirrorOf(mirrorPod, static *corev1.Pod) bool {
	if mirrorPod == nil || static == nil {
		return false
	}
	if mirrorPod.Name != static.Name || mirrorPod.Namespace != static.Namespace {
		return false
	}
	hash, ok := mirrorPod.Annotations[podutil.ConfigMirrorAnnotationKey]
	return ok && hash != "" && hash == podutil.Hash(static)
}

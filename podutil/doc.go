// Package podutil holds the identity of pods as the kubelet defines it — the config
// annotations, full names, and whether a pod is static, a mirror, or from the API server —
// so that sources/, podmanager/, mirror/ and node/ agree on it without importing each other.
//
//	if podutil.IsMirrorPod(pod) { static, ok := manager.GetPodByMirrorPod(pod) ... }
//	key := podutil.FullName(pod) // "name_namespace"
package podutil

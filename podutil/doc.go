// Package podutil holds what every layer must read the same way from a pod itself: its
// identity as the kubelet defines it — the config annotations, full names, and whether a pod is
// static, a mirror, or from the API server — and the spec facts the controller and the
// runtime side both act on (a sidecar, a grace period), so that sources/, podmanager/,
// mirror/, node/, lifecycle/ and the providers agree on them without importing each other.
//
//	if podutil.IsMirrorPod(pod) { static, ok := manager.GetPodByMirrorPod(pod) ... }
//	key := podutil.FullName(pod) // "name_namespace"
//	if podutil.IsSidecar(&pod.Spec.InitContainers[i]) { ... }
package podutil

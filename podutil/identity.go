package podutil

import corev1 "k8s.io/api/core/v1"

// FullName is the kubelet's unique key for a pod on a node: "name_namespace".
func FullName(pod *corev1.Pod) string {
	return BuildFullName(pod.Name, pod.Namespace)
}

// BuildFullName joins name and namespace the way FullName does.
func BuildFullName(name, namespace string) string {
	return name + "_" + namespace
}

// Source returns the pod's config source, or "" when it has none.
func Source(pod *corev1.Pod) string {
	return pod.Annotations[ConfigSourceAnnotationKey]
}

// IsStaticPod reports whether pod came from a manifest (file or HTTP) rather than the API
// server.
func IsStaticPod(pod *corev1.Pod) bool {
	return IsStaticAnnotated(pod.Annotations)
}

// IsStaticAnnotated is IsStaticPod of a pod with these annotations: for callers that hold a
// pod's metadata, not the pod.
func IsStaticAnnotated(annotations map[string]string) bool {
	s := annotations[ConfigSourceAnnotationKey]
	return s != "" && s != APIServerSource
}

// IsMirrorPod reports whether pod is the API server's mirror of a static pod.
func IsMirrorPod(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return ok
}

// MirrorHash is the static pod hash a mirror pod stands for ("" when pod is not a mirror).
func MirrorHash(pod *corev1.Pod) string {
	return pod.Annotations[ConfigMirrorAnnotationKey]
}

// Hash is a static pod's config hash ("" when it has none).
func Hash(pod *corev1.Pod) string {
	return pod.Annotations[ConfigHashAnnotationKey]
}

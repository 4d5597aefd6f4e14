package podutil

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// FullName is the kubelet's unique key for a pod on a node: "name_namespace".
func FullName(pod *corev1.Pod) string {
	return BuildFullName(pod.Name, pod.Namespace)
}

// BuildFullName joins name and namespace the way FullName does.
func BuildFullName(name, namespace string) string {
	return name + "_" + namespace
}

// ParseFullName splits a full name built by FullName back into name and namespace. Neither
// part may be empty, and there must be exactly one "_": object names and namespaces are DNS
// names, which cannot contain one, so any other shape is not a full name.
func ParseFullName(fullName string) (name, namespace string, err error) {
	parts := strings.Split(fullName, "_")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("parse pod full name %q: want \"name_namespace\"", fullName)
	}
	return parts[0], parts[1], nil
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

// IsSidecar reports whether c, an init container, is a sidecar: a restartable init container
// (restartPolicy Always), which keeps running beside the main containers instead of
// completing before them.
func IsSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// GracePeriod is how long a pod being stopped gets to stop: its deletion's grace period
// (deletionGracePeriodSeconds), else its terminationGracePeriodSeconds, else the API default
// of 30 s — as the kubelet's pod workers compute it.
func GracePeriod(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return corev1.DefaultTerminationGracePeriodSeconds * time.Second
}

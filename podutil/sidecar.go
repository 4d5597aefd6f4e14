package podutil

import corev1 "k8s.io/api/core/v1"

// IsSidecar reports whether c, an init container, is a sidecar: a restartable init container
// (restartPolicy Always), which keeps running beside the main containers instead of
// completing before them.
func IsSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

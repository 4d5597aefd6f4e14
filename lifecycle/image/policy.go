package image

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PullPolicy is c's imagePullPolicy, or the one the API server would default it to.
func PullPolicy(c *corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	if tag(c.Image) == "latest" || (tag(c.Image) == "" && !strings.Contains(c.Image, "@")) {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// tag is ref's tag: what follows the last ':' after the last '/', before any digest.
func tag(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	name := ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return name[i+1:]
	}
	return ""
}

package lifecycle

import (
	"context"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vk-static/vk-static/lifecycle/probe"
)

// verifyRunAsNonRoot is the kubelet's verifyRunAsNonRoot for c's effective security context
// (the container's over the pod's) and its image's user, with the kubelet's messages. A
// runtime without ImageUserService checks runAsNonRoot itself (Admit: the process runtime's
// default user).
func (p *Provider) verifyRunAsNonRoot(ctx context.Context, pod *corev1.Pod, c *corev1.Container) error {
	nonRoot, runAsUser := effectiveRunAs(pod, c)
	if nonRoot == nil || !*nonRoot {
		return nil
	}
	where := fmt.Sprintf("(pod: %q, container: %s)", probe.FormatPod(pod.Name, pod.Namespace, pod.UID), c.Name)
	if runAsUser != nil {
		if *runAsUser == 0 {
			return &configError{reason: reasonConfigError, retry: true, err: fmt.Errorf("container's runAsUser breaks non-root policy %s", where)}
		}
		return nil
	}
	users, ok := p.rt.(ImageUserService)
	if !ok {
		return nil
	}
	uid, username, err := users.ImageUser(ctx, c.Image)
	switch {
	case err != nil:
		return &configError{reason: reasonConfigError, retry: true, err: err}
	case uid == nil && username != "":
		err = fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root %s", username, where)
	case uid == nil || *uid == 0: // an image that names no user runs as root
		err = fmt.Errorf("container has runAsNonRoot and image will run as root %s", where)
	default:
		if errs := validation.IsValidUserID(*uid); len(errs) > 0 {
			err = fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): %s %s",
				*uid, math.MaxInt32, strings.Join(errs, "; "), where)
		}
	}
	if err != nil {
		return &configError{reason: reasonConfigError, retry: true, err: err}
	}
	return nil
}

// effectiveRunAs is c's runAsNonRoot and runAsUser, each the container's over the pod's.
func effectiveRunAs(pod *corev1.Pod, c *corev1.Container) (nonRoot *bool, uid *int64) {
	if psc := pod.Spec.SecurityContext; psc != nil {
		nonRoot, uid = psc.RunAsNonRoot, psc.RunAsUser
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
	}
	return nonRoot, uid
}

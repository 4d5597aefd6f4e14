package cri

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Admit refuses, naming the field, a pod this runtime must not or cannot run:
//
//   - a privileged container without Config.AllowPrivileged (--allow-privileged);
//   - a pod off the host's network while the runtime does not report NetworkReady (no CNI
//     configuration): such a sandbox fails, and leaves a network namespace behind.
func (r *Runtime) Admit(pod *corev1.Pod) error {
	if !r.cfg.AllowPrivileged {
		if path := privilegedContainer(pod); path != "" {
			return fmt.Errorf("%s.securityContext.privileged: privileged containers are not allowed on this node (--allow-privileged)", path)
		}
	}
	if !pod.Spec.HostNetwork {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ready, err := r.networkReady(ctx)
		if err != nil {
			return fmt.Errorf("spec.hostNetwork: false needs the runtime's pod network, and the runtime's status could not be read: %v", err)
		}
		if !ready {
			return fmt.Errorf("spec.hostNetwork: false needs a pod network, and the container runtime reports none ready (no CNI configuration); only hostNetwork pods run on this node")
		}
	}
	return nil
}

// privilegedContainer is the field path of the first privileged container, "" when none is.
func privilegedContainer(pod *corev1.Pod) string {
	for _, l := range []struct {
		field string
		cs    []corev1.Container
	}{{"spec.initContainers", pod.Spec.InitContainers}, {"spec.containers", pod.Spec.Containers}} {
		for i, c := range l.cs {
			if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
				return fmt.Sprintf("%s[%d]", l.field, i)
			}
		}
	}
	for i, c := range pod.Spec.EphemeralContainers {
		if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
			return fmt.Sprintf("spec.ephemeralContainers[%d]", i)
		}
	}
	return ""
}

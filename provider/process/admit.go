package process

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Admit applies the process runtime's security policy to pod, naming the first field it
// refuses:
//
//   - a container that would run as uid 0 — runAsUser 0 in its or the pod's securityContext,
//     or neither set while the default user is root — unless Config.AllowRoot
//     (--process-allow-root);
//   - runAsNonRoot: true for a container that would run as root;
//   - privileged: true and capabilities.add: a host process cannot be given more than its
//     user has, and pretending would mislead;
//   - without root, any runAsUser other than the agent's own uid (its supervisors can only
//     map that one).
//
// allowPrivilegeEscalation, seccomp, AppArmor and SELinux options are not enforced (documented
// in the package doc); hostPID, hostIPC and hostNetwork are what every process pod gets anyway.
func (r *Runtime) Admit(pod *corev1.Pod) error {
	podSC := pod.Spec.SecurityContext
	for _, c := range allContainers(pod) {
		if err := r.admitContainer(podSC, c.container, c.path); err != nil {
			return err
		}
	}
	return nil
}

type containerAt struct {
	container *corev1.Container
	path      string
}

func allContainers(pod *corev1.Pod) []containerAt {
	var out []containerAt
	for i := range pod.Spec.InitContainers {
		out = append(out, containerAt{&pod.Spec.InitContainers[i], fmt.Sprintf("spec.initContainers[%d]", i)})
	}
	for i := range pod.Spec.Containers {
		out = append(out, containerAt{&pod.Spec.Containers[i], fmt.Sprintf("spec.containers[%d]", i)})
	}
	return out
}

func (r *Runtime) admitContainer(podSC *corev1.PodSecurityContext, c *corev1.Container, path string) error {
	sc := c.SecurityContext
	if sc != nil && sc.Privileged != nil && *sc.Privileged {
		return fmt.Errorf("%s.securityContext.privileged: true is not supported: the process provider runs containers as host processes with their user's rights only", path)
	}
	if sc != nil && sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
		return fmt.Errorf("%s.securityContext.capabilities.add: %v is not supported: the process provider cannot give a process capabilities its user lacks", path, sc.Capabilities.Add)
	}

	// The effective user, and the field that decided it.
	uid, uidField := r.defaultUser.UID, ""
	if podSC != nil && podSC.RunAsUser != nil {
		uid, uidField = *podSC.RunAsUser, "spec.securityContext.runAsUser"
	}
	if sc != nil && sc.RunAsUser != nil {
		uid, uidField = *sc.RunAsUser, path+".securityContext.runAsUser"
	}
	nonRoot, nonRootField := false, ""
	if podSC != nil && podSC.RunAsNonRoot != nil {
		nonRoot, nonRootField = *podSC.RunAsNonRoot, "spec.securityContext.runAsNonRoot"
	}
	if sc != nil && sc.RunAsNonRoot != nil {
		nonRoot, nonRootField = *sc.RunAsNonRoot, path+".securityContext.runAsNonRoot"
	}

	if !r.root {
		if uid != r.defaultUser.UID {
			return fmt.Errorf("%s: %d is not allowed: the agent is not root and runs containers only as its own user (uid %d)", uidField, uid, r.defaultUser.UID)
		}
		if nonRoot && uid == 0 {
			return fmt.Errorf("%s: true, but the container would run as root (the agent's own uid 0)", nonRootField)
		}
		return nil
	}
	if uid != 0 {
		return nil
	}
	if nonRoot {
		if uidField == "" {
			return fmt.Errorf("%s: true, but the container would run as root (the process provider's default user is root and no runAsUser is set)", nonRootField)
		}
		return fmt.Errorf("%s: true, but %s is 0 (root)", nonRootField, uidField)
	}
	if r.cfg.AllowRoot {
		return nil
	}
	if uidField == "" {
		return fmt.Errorf("%s.securityContext.runAsUser: not set and the process provider's default user is root, which is not allowed: set runAsUser, or start the agent with --process-allow-root", path)
	}
	return fmt.Errorf("%s: 0 (root) is not allowed: start the agent with --process-allow-root", uidField)
}

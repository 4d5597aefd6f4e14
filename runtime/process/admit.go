package process

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
	"github.com/vk-static/vk-static/podutil"
)

// Admit applies the process runtime's security policy to pod, naming the first field it
// refuses. Trust follows the source: a static pod (file or HTTP source) is the node
// administrator's, as the kubelet treats it, and runs as its manifest says — root when it names
// no user, as an image's default user is — unless Config.RestrictStaticPods holds it to the
// rules of API pods, whose authors are whoever may create pods in the cluster:
//
//   - a container that would run as uid 0 — runAsUser 0 in its or the pod's securityContext,
//     or neither set while the default user is root — unless Config.AllowRoot
//     (--process-allow-root);
//   - privileged: true and capabilities.add: a host process cannot be given more than its
//     user has, and pretending would mislead. A trusted static pod that runs as root has them
//     already (root on the host holds every capability), so it may ask for them.
//
// For every pod:
//
//   - runAsNonRoot: true for a container that would run as root;
//   - without root, any runAsUser other than the agent's own uid (its supervisors can only
//     map that one).
//
// allowPrivilegeEscalation, seccomp, AppArmor and SELinux options are not enforced (documented
// in the package doc); hostPID, hostIPC and hostNetwork are what every process pod gets anyway.
func (r *Runtime) Admit(pod *corev1.Pod) error {
	podSC := pod.Spec.SecurityContext
	for _, c := range allContainers(pod) {
		if err := r.admitContainer(pod, podSC, c.container, c.path); err != nil {
			return err
		}
	}
	return nil
}

// trusted reports whether pod runs as its manifest says: a static pod, unless
// Config.RestrictStaticPods.
func (r *Runtime) trusted(pod *corev1.Pod) bool {
	return pod != nil && !r.cfg.RestrictStaticPods && podutil.IsStaticPod(pod)
}

// defaultUserFor is who runs a container of pod whose config names no user: root for a trusted
// static pod when the agent is root (the user of almost every image a manifest names), else
// the configured default user (--process-default-user; the agent itself when it is not root).
func (r *Runtime) defaultUserFor(pod *corev1.Pod) *lifecycle.User {
	if r.root && r.trusted(pod) {
		return &lifecycle.User{}
	}
	return r.defaultUser
}

// whose says which rules a refused pod was held to, for the refusal messages: an operator must
// know which flag changes the outcome.
func whose(pod *corev1.Pod) string {
	if podutil.IsStaticPod(pod) {
		return "a static pod held to the API pods' rules by --process-restrict-static-pods"
	}
	return "an API pod (static pods run as their manifest says)"
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

func (r *Runtime) admitContainer(pod *corev1.Pod, podSC *corev1.PodSecurityContext, c *corev1.Container, path string) error {
	sc := c.SecurityContext
	trusted := r.trusted(pod)
	defaultUser := r.defaultUserFor(pod)

	// The effective user, and the field that decided it.
	uid, uidField := defaultUser.UID, ""
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

	// Root on the host already holds what privileged and capabilities.add ask for.
	holdsAll := trusted && r.root && uid == 0
	if sc != nil && sc.Privileged != nil && *sc.Privileged && !holdsAll {
		return fmt.Errorf("%s.securityContext.privileged: true is not supported for %s: the process provider runs containers as host processes with their user's rights only", path, whoseRights(pod, trusted))
	}
	if sc != nil && sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 && !holdsAll {
		return fmt.Errorf("%s.securityContext.capabilities.add: %v is not supported for %s: the process provider cannot give a process capabilities its user lacks", path, sc.Capabilities.Add, whoseRights(pod, trusted))
	}

	if !r.root {
		if uid != defaultUser.UID {
			return fmt.Errorf("%s: %d is not allowed: the agent is not root and runs containers only as its own user (uid %d)", uidField, uid, defaultUser.UID)
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
			if trusted {
				return fmt.Errorf("%s: true, but the container would run as root (a static pod that names no runAsUser runs as root, as its image's default user would): set runAsUser", nonRootField)
			}
			return fmt.Errorf("%s: true, but the container would run as root (the process provider's default user is root and no runAsUser is set)", nonRootField)
		}
		return fmt.Errorf("%s: true, but %s is 0 (root)", nonRootField, uidField)
	}
	if trusted || r.cfg.AllowRoot {
		return nil
	}
	if uidField == "" {
		return fmt.Errorf("%s.securityContext.runAsUser: not set and the process provider's default user (--process-default-user) is root, which is not allowed for %s: set runAsUser, or start the agent with --process-allow-root", path, whose(pod))
	}
	return fmt.Errorf("%s: 0 (root) is not allowed for %s: start the agent with --process-allow-root", uidField, whose(pod))
}

// whoseRights names, in a refusal of privileges, the pod's kind and what would have them.
func whoseRights(pod *corev1.Pod, trusted bool) string {
	if trusted {
		return "a static pod that does not run as root (one that runs as root holds every capability)"
	}
	return whose(pod)
}

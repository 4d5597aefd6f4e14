package process

import (
	"fmt"
	"slices"
	"strings"

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
//   - a group 0 — runAsGroup, supplementalGroups, fsGroup, or a primary group that comes
//     with the user — unless Config.AllowRoot: group root reads the files of root's group,
//     the agent's own under --root-dir among them (every pod's secrets and tokens);
//   - a uid or gid of the host — one that /etc/passwd or /etc/group names, or any below 1000,
//     the system's — unless Config.AllowedUIDs or Config.AllowedGIDs holds it
//     (--process-allowed-uids, --process-allowed-gids), or it is the default user's, whom the
//     operator chose: such an id owns the host's files and devices (group disk writes its
//     block devices). Ids from 1000 up that the host does not name are the pods' to share;
//   - privileged: true and capabilities.add: a host process cannot be given more than its
//     user has, and pretending would mislead. A trusted static pod that runs as root has them
//     already (root on the host holds every capability), so it may ask for them.
//
// For every pod:
//
//   - runAsNonRoot: true for a container that would run as root;
//   - without root, any runAsUser other than the agent's own uid (its supervisors can only
//     map that one). Groups are not checked then: every container keeps the agent's own.
//
// And for a restricted pod (an untrusted one, the agent root): hostPID and hostIPC unless
// Config.AllowHostNamespaces, hostNetwork unless Config.AllowHostNetwork (admitNamespaces).
// Seccomp, AppArmor and SELinux options are not enforced (documented in the package doc);
// allowPrivilegeEscalation: false is, by no_new_privs (containerSandbox).
func (r *Runtime) Admit(pod *corev1.Pod) error {
	if err := r.admitNamespaces(pod); err != nil {
		return err
	}
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
		if trusted {
			return nil
		}
		return r.admitIDs(pod, r.containerIDs(pod, podSC, sc, path, uid, uidField))
	}
	// A container that runs as root is not held to the groups' rules: root holds every
	// capability, so no group gives it more.
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

// idUse is an id a container would run with, and what gives it, for the refusal.
type idUse struct {
	id    int64
	group bool
	// field is the pod's field that names the id or, with from set, the field left unset.
	field string
	// from says where an id the pod does not name comes from.
	from string
	// defaults: the id is the default user's (--process-default-user), the operator's choice.
	defaults bool
}

// containerIDs are the ids a container of an untrusted pod that runs as uid (named by uidField,
// "" for the default user) would run with, as the lifecycle and containerUser decide them: the
// uid the pod names, runAsGroup over the gid that follows the user, the pod's
// supplementalGroups over the default user's, and fsGroup.
func (r *Runtime) containerIDs(pod *corev1.Pod, podSC *corev1.PodSecurityContext, sc *corev1.SecurityContext, path string, uid int64, uidField string) []idUse {
	def := r.defaultUserFor(pod)
	var ids []idUse
	if uidField != "" {
		ids = append(ids, idUse{id: uid, field: uidField})
	}

	gidField := ""
	var gid int64
	if podSC != nil && podSC.RunAsGroup != nil {
		gid, gidField = *podSC.RunAsGroup, "spec.securityContext.runAsGroup"
	}
	if sc != nil && sc.RunAsGroup != nil {
		gid, gidField = *sc.RunAsGroup, path+".securityContext.runAsGroup"
	}
	switch {
	case gidField != "":
		ids = append(ids, idUse{id: gid, group: true, field: gidField})
	case uidField == "" || uid == def.UID:
		ids = append(ids, idUse{id: def.GID, group: true, field: path + ".securityContext.runAsGroup", from: "the default user's group, --process-default-user", defaults: true})
	default:
		u := idUse{group: true, field: path + ".securityContext.runAsGroup"}
		var found bool
		if u.id, found = r.groupOf(uid); found {
			u.from = fmt.Sprintf("uid %d's primary group on the host", uid)
		} else {
			u.from = fmt.Sprintf("its runAsUser's number, the host having no user %d", uid)
		}
		ids = append(ids, u)
	}

	var groups []int64
	if podSC != nil {
		groups = podSC.SupplementalGroups
	}
	if uidField != "" || gidField != "" || len(groups) > 0 {
		for i, g := range groups {
			ids = append(ids, idUse{id: g, group: true, field: fmt.Sprintf("spec.securityContext.supplementalGroups[%d]", i)})
		}
	} else {
		for _, g := range def.SupplementalGroups {
			ids = append(ids, idUse{id: g, group: true, field: "spec.securityContext.supplementalGroups", from: "a supplementary group of the default user, --process-default-user", defaults: true})
		}
	}
	if podSC != nil && podSC.FSGroup != nil {
		ids = append(ids, idUse{id: *podSC.FSGroup, group: true, field: "spec.securityContext.fsGroup"})
	}
	return ids
}

// admitIDs refuses the first of ids that is root without Config.AllowRoot, or the host's
// without Config.AllowedUIDs or AllowedGIDs holding it.
func (r *Runtime) admitIDs(pod *corev1.Pod, ids []idUse) error {
	def := r.defaultUserFor(pod)
	for _, u := range ids {
		kind, flag, allowed := "uid", "--process-allowed-uids", r.cfg.AllowedUIDs
		if u.group {
			kind, flag, allowed = "gid", "--process-allowed-gids", r.cfg.AllowedGIDs
		}
		if u.id == 0 {
			if r.cfg.AllowRoot {
				continue
			}
			if u.from != "" {
				return fmt.Errorf("%s: not set, so the container would run with group 0 (root), %s, which is not allowed for %s: set %s, or start the agent with --process-allow-root", u.field, u.from, whose(pod), lastField(u.field))
			}
			return fmt.Errorf("%s: 0 (root) is not allowed for %s: start the agent with --process-allow-root", u.field, whose(pod))
		}
		operators := u.defaults || (!u.group && u.id == def.UID) ||
			(u.group && (u.id == def.GID || slices.Contains(def.SupplementalGroups, u.id)))
		if operators || inRanges(allowed, u.id) {
			continue
		}
		var name string
		var found bool
		var err error
		if u.group {
			name, found, err = r.accounts().group(u.id)
		} else {
			name, _, found, err = r.accounts().user(u.id)
		}
		var what string
		switch {
		case found && u.group:
			what = "the host's group " + name
		case found:
			what = "the host's user " + name
		case u.id < systemIDs:
			what = fmt.Sprintf("a system %s of the host (below %d)", kind, systemIDs)
		case err != nil:
			what = fmt.Sprintf("an id the host's accounts could not be read for (%v)", err)
		default:
			continue
		}
		if u.from != "" {
			return fmt.Errorf("%s: not set, so the container would run with group %d (%s), %s, which is not allowed for %s: set %s, or allow it with %s", u.field, u.id, u.from, what, whose(pod), lastField(u.field), flag)
		}
		return fmt.Errorf("%s: %d is %s, which is not allowed for %s: allow it with %s", u.field, u.id, what, whose(pod), flag)
	}
	return nil
}

// lastField is the field a path ends with, for "set runAsGroup": a pod author sets it in
// whichever securityContext fits.
func lastField(path string) string {
	return path[strings.LastIndex(path, ".")+1:]
}

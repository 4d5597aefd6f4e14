package process

import (
	"os/user"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/lifecycle"
)

// containerUser is who runs the container cfg describes: the user its pod names over the
// default for its pod (defaultUserFor: root for a trusted static pod, else
// --process-default-user). The lifecycle marks what the pod leaves unsaid with -1 (a
// runAsGroup without a runAsUser, and the reverse): the default's uid fills in a missing uid;
// a missing gid is the named uid's primary group when the host knows the uid (as a runtime
// reads the image's /etc/passwd), else the default's gid when the uid is the default's, else
// the uid itself.
func (r *Runtime) containerUser(cfg *lifecycle.ContainerConfig) *lifecycle.User {
	def := r.defaultUserFor(cfg.Pod)
	if cfg.User == nil {
		return withFSGroup(def, cfg.Pod)
	}
	u := &lifecycle.User{UID: cfg.User.UID, GID: cfg.User.GID, SupplementalGroups: cfg.User.SupplementalGroups}
	if u.UID < 0 {
		u.UID = def.UID
	}
	if u.GID < 0 {
		switch {
		case u.UID == def.UID:
			u.GID = def.GID
		default:
			u.GID = u.UID
			if entry, err := user.LookupId(strconv.FormatInt(u.UID, 10)); err == nil {
				if gid, err := strconv.ParseInt(entry.Gid, 10, 64); err == nil {
					u.GID = gid
				}
			}
		}
	}
	return withFSGroup(u, cfg.Pod)
}

// withFSGroup is u with the pod's fsGroup among its supplementary groups, as the kubelet gives
// every container of a pod with one (the CRI backend passes it in the container's
// supplementalGroups): the group the pod's volumes are given (lifecycle/volume), so that a
// container running as another user reads and writes them. u is not modified.
func withFSGroup(u *lifecycle.User, pod *corev1.Pod) *lifecycle.User {
	if pod == nil || pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.FSGroup == nil {
		return u
	}
	g := *pod.Spec.SecurityContext.FSGroup
	if slices.Contains(u.SupplementalGroups, g) {
		return u
	}
	out := *u
	out.SupplementalGroups = append(slices.Clone(u.SupplementalGroups), g)
	return &out
}

package process

import (
	"slices"

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
			u.GID, _ = r.groupOf(u.UID)
		}
	}
	return withFSGroup(u, cfg.Pod)
}

// groupOf is the group of uid when its pod names none: its primary group when the host knows
// the uid (as a runtime reads the image's /etc/passwd; found), else the uid itself.
func (r *Runtime) groupOf(uid int64) (gid int64, found bool) {
	if _, gid, found, err := r.accounts().user(uid); err == nil && found {
		return gid, true
	}
	return uid, false
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

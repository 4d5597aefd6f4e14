package volume

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// The kubelet's SetVolumeOwnership masks (pkg/volume/volume_linux.go): what fsGroup adds to
// every file of a volume — group read and write for a volume containers write to (emptyDir),
// group read for one they only read (configMap, secret, downwardAPI, projected) — and to every
// directory, with group search and the setgid bit, so that what a container creates in it
// belongs to the fsGroup too.
const (
	rwMask   os.FileMode = 0o660
	roMask   os.FileMode = 0o440
	execMask os.FileMode = 0o110
)

// ownership is what the kubelet's volume manager hands every volume's SetUp (its MounterArgs):
// the pod's fsGroup, and the fsUser projected credentials are given to.
type ownership struct {
	// fsGroup is spec.securityContext.fsGroup; nil leaves files with the agent's group and
	// their modes as written.
	fsGroup *int64
	// fsUser is the one user every container of the pod runs as, when there is one (the
	// kubelet's FsUserFrom): a projected serviceAccountToken file is made its own.
	fsUser *int64
}

// podOwnership is the ownership of pod's volumes.
func podOwnership(pod *corev1.Pod) ownership {
	var o ownership
	if psc := pod.Spec.SecurityContext; psc != nil && psc.FSGroup != nil {
		g := *psc.FSGroup
		o.fsGroup = &g
	}
	o.fsUser = podFSUser(pod)
	return o
}

// podFSUser is the kubelet's FsUserFrom: the runAsUser of every container (its own or the
// pod's) when they all name the same one, else nil.
func podFSUser(pod *corev1.Pod) *int64 {
	var user *int64
	same := true
	visit := func(sc *corev1.SecurityContext) {
		var u *int64
		if psc := pod.Spec.SecurityContext; psc != nil && psc.RunAsUser != nil {
			u = psc.RunAsUser
		}
		if sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		switch {
		case u == nil:
			same = false
		case user == nil:
			v := *u
			user = &v
		case *user != *u:
			same = false
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(pod.Spec.InitContainers[i].SecurityContext)
	}
	for i := range pod.Spec.Containers {
		visit(pod.Spec.Containers[i].SecurityContext)
	}
	for i := range pod.Spec.EphemeralContainers {
		visit(pod.Spec.EphemeralContainers[i].SecurityContext)
	}
	if !same {
		return nil
	}
	return user
}

// credentialMode is the mode of a projected credential (a serviceAccountToken): the volume's
// defaultMode, or 0600 once the pod has an fsGroup or an fsUser — the kubelet's choice, so
// that only that user (and, with the fsGroup's group read added by the ownership change, that
// group) can read the token whatever defaultMode says.
func (o ownership) credentialMode(defaultMode os.FileMode) os.FileMode {
	if o.fsGroup != nil || o.fsUser != nil {
		return 0o600
	}
	return defaultMode
}

// fileMode is the mode a file written with mode ends up with once fsGroup is applied to a
// volume mounted readOnly or not: what the atomic writer compares a version on disk with.
func (o ownership) fileMode(mode os.FileMode, readOnly bool) os.FileMode {
	if o.fsGroup == nil {
		return mode
	}
	return mode | ownershipMask(readOnly)
}

func ownershipMask(readOnly bool) os.FileMode {
	if readOnly {
		return roMask
	}
	return rwMask
}

// applyFSGroup is the kubelet's SetVolumeOwnership for the volume at dir: every file and
// directory below it (deepest first, symlinks not followed) gets group fsGroup and the mask's
// bits, directories also group search and setgid; a symlink's own group is changed, its mode
// left alone (chmod would change its target). Nothing happens without an fsGroup.
//
// onRootMismatch skips the walk when dir already has the group and the bits (the kubelet's
// fsGroupChangePolicy OnRootMismatch test): an emptyDir set up again after an agent restart
// keeps what its containers did to its files, as the kubelet's "ready" marker keeps it.
//
// As in the kubelet, a file whose group or mode cannot be changed is logged, not an error (the
// container may still manage, and a retry would fail alike); only a directory that cannot be
// read is.
func applyFSGroup(ctx context.Context, dir string, fsGroup *int64, readOnly, onRootMismatch bool) error {
	if fsGroup == nil {
		return nil
	}
	logger := klog.FromContext(ctx)
	if onRootMismatch && !needsFSGroup(dir, *fsGroup, readOnly) {
		logger.V(5).Info("Volume already has the pod's fsGroup", "path", dir, "fsGroup", *fsGroup)
		return nil
	}
	mask := ownershipMask(readOnly)
	var failed int
	var firstErr error
	note := func(err error) {
		if err == nil {
			return
		}
		failed++
		if firstErr == nil {
			firstErr = err
		}
	}
	err := walkDeep(dir, func(path string, info fs.FileInfo) {
		note(os.Lchown(path, -1, int(*fsGroup)))
		if info.Mode()&fs.ModeSymlink != 0 {
			return
		}
		m := mask
		if info.IsDir() {
			m |= fs.ModeSetgid | execMask
		}
		// os.Chmod maps the setgid and sticky bits of the mode it is given; the current mode
		// is kept and only bits are added, as the kubelet does.
		note(os.Chmod(path, info.Mode()|m))
	})
	if failed > 0 {
		logger.Error(firstErr, "Could not give every file of the volume the pod's fsGroup", "path", dir, "fsGroup", *fsGroup, "failures", failed)
	}
	return err
}

// needsFSGroup is the kubelet's requiresPermissionChange: dir is not of group fsGroup, lacks a
// bit of the mask plus search, or lacks setgid (or cannot be read).
func needsFSGroup(dir string, fsGroup int64, readOnly bool) bool {
	info, err := os.Stat(dir)
	if err != nil {
		return true
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int64(st.Gid) != fsGroup || !info.IsDir() {
		return true
	}
	want := ownershipMask(readOnly) | execMask
	return info.Mode().Perm()&want != want || info.Mode()&fs.ModeSetgid == 0
}

// walkDeep calls fn for every entry below root and then root, children before their directory
// (the kubelet's order: a directory's own mode changes after its content), without following
// symlinks. A directory that cannot be read stops it with its error.
func walkDeep(root string, fn func(path string, info fs.FileInfo)) error {
	info, err := os.Lstat(root)
	if err != nil {
		return err
	}
	return walkDeepFrom(root, info, fn)
}

func walkDeepFrom(path string, info fs.FileInfo, fn func(string, fs.FileInfo)) error {
	if info.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		names, err := f.Readdirnames(-1)
		_ = f.Close()
		if err != nil {
			return err
		}
		for _, name := range names {
			child := filepath.Join(path, name)
			ci, err := os.Lstat(child)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed meanwhile (a container working in an emptyDir)
			}
			if err != nil {
				return err
			}
			if err := walkDeepFrom(child, ci, fn); err != nil {
				return err
			}
		}
	}
	fn(path, info)
	return nil
}

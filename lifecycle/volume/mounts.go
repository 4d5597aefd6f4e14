package volume

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Mount is one of a container's volume mounts, resolved on the host.
type Mount struct {
	// HostPath is what to bind-mount: the volume's directory, or with SubPath a mount point
	// in the pod's volume-subpaths directory on which the file or directory inside the volume
	// is bound (see Manager.Mounts), a path that no container can redirect.
	HostPath string
	// ContainerPath is the mountPath, absolute and clean.
	ContainerPath string
	// ReadOnly is the mount's readOnly, and always true for configMap, secret, downwardAPI and
	// projected volumes, which the kubelet mounts read-only.
	ReadOnly bool
	// SubPath says HostPath is a file or directory inside the volume (subPath or subPathExpr),
	// bound at a mount point of the pod's own, which Teardown removes.
	SubPath bool
}

// ErrOutsideVolume is a subPath that leads out of its volume, through a symlink or "..": it
// is refused, wrapped in an error that names the field.
var ErrOutsideVolume = errors.New("subPath leads outside the volume")

// Mounts resolves container c's volumeMounts against vols, the volumes Setup made for pod.
// expand replaces $(VAR) references in a subPathExpr with the container's environment, as for
// its command and args, leaving an undefined reference as it is (which is refused here, as
// the kubelet refuses a subPathExpr naming a variable the container does not have).
//
// A subPath that does not exist in the volume is created as a directory with the volume
// root's mode (the kubelet does the same, so that it does not appear later owned by the
// runtime). A subPath is then opened beneath its volume without following symlinks and bound
// at <PodsDir>/<uid>/volume-subpaths/<volume>/<container>/<index>, which is what the runtime
// mounts (subPath); calling Mounts again for the container reuses those mounts, and Teardown
// removes them. Refusals are *FieldError naming the field (volumeDevices, mountPropagation
// other than None, recursiveReadOnly Enabled, an absolute or ".." subPath); a subPath that
// escapes through a symlink, there when it is checked or swapped in while it is opened,
// wraps ErrOutsideVolume.
func (m *Manager) Mounts(pod *corev1.Pod, c *corev1.Container, vols Volumes, expand func(string) string) ([]Mount, error) {
	if err := checkUID(pod.UID); err != nil {
		return nil, err
	}
	unlock := m.locks.lock(pod.UID)
	defer unlock()
	base := containerField(pod, c.Name)
	if len(c.VolumeDevices) > 0 {
		return nil, refuse(base+".volumeDevices[0]", c.VolumeDevices[0].Name,
			"raw block volumes are not supported on this node")
	}
	readOnlyKinds := map[string]bool{}
	declared := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		declared[v.Name] = true
		if _, ok := apiVolumeKind(&v); ok {
			readOnlyKinds[v.Name] = true
		}
	}

	mounts := make([]Mount, 0, len(c.VolumeMounts))
	for j, vm := range c.VolumeMounts {
		field := fmt.Sprintf("%s.volumeMounts[%d]", base, j)
		hostPath, ok := vols[vm.Name]
		if !ok {
			if !declared[vm.Name] {
				return nil, refuse(field+".name", vm.Name, "no volume of that name in spec.volumes")
			}
			return nil, fmt.Errorf("%s.name %q: the volume is not set up", field, vm.Name)
		}
		if vm.MountPropagation != nil && *vm.MountPropagation != corev1.MountPropagationNone {
			return nil, refuse(field+".mountPropagation", string(*vm.MountPropagation),
				"not supported on this node (mounts are private: use None or leave it unset)")
		}
		if vm.RecursiveReadOnly != nil && *vm.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
			return nil, refuse(field+".recursiveReadOnly", string(*vm.RecursiveReadOnly),
				"not supported on this node (use IfPossible or Disabled)")
		}
		if vm.MountPath == "" {
			return nil, refuse(field+".mountPath", "", "must not be empty")
		}

		subPath, subField, err := mountSubPath(vm, field, expand)
		if err != nil {
			return nil, err
		}
		mnt := Mount{
			HostPath:      hostPath,
			ContainerPath: filepath.Clean("/" + vm.MountPath),
			ReadOnly:      vm.ReadOnly || readOnlyKinds[vm.Name],
		}
		if subPath != "" {
			if !isPathElement(c.Name) {
				return nil, refuse(base+".name", c.Name, "must be a DNS label (it names a directory)")
			}
			p, err := m.subPath(m.subPathTarget(pod.UID, vm.Name, c.Name, j), hostPath, subPath)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", subField, subPath, err)
			}
			mnt.HostPath, mnt.SubPath = p, true
		}
		mounts = append(mounts, mnt)
	}
	return mounts, nil
}

// mountSubPath returns the mount's subPath (subPathExpr expanded) and the field it came from.
func mountSubPath(vm corev1.VolumeMount, field string, expand func(string) string) (string, string, error) {
	subPath, subField := vm.SubPath, field+".subPath"
	if vm.SubPathExpr != "" {
		if vm.SubPath != "" {
			return "", "", refuse(field, "", "subPath and subPathExpr are mutually exclusive")
		}
		subField = field + ".subPathExpr"
		if expand == nil {
			return "", "", fmt.Errorf("%s %q: no environment to expand it with", subField, vm.SubPathExpr)
		}
		subPath = expand(vm.SubPathExpr)
		if strings.Contains(subPath, "$(") {
			return "", "", fmt.Errorf("%s %q: expands to %q, which still references a variable the container does not define", subField, vm.SubPathExpr, subPath)
		}
		if subPath == "" {
			return "", "", fmt.Errorf("%s %q: expands to an empty path", subField, vm.SubPathExpr)
		}
	}
	if subPath == "" {
		return "", subField, nil
	}
	if filepath.IsAbs(subPath) {
		return "", "", refuse(subField, subPath, "must be a relative path")
	}
	for _, e := range strings.Split(subPath, "/") {
		if e == ".." {
			return "", "", refuse(subField, subPath, "must not contain '..'")
		}
	}
	return subPath, subField, nil
}

// resolveSubPath walks rel below the volume root one element at a time, resolving each
// symlink and checking that it stays inside the root (a configMap's "key -> ..data/key" does;
// a link to / does not), and creates missing directories with the root's mode. It returns the
// root and the resolved path, symlinks resolved, for openBeneath to open what was checked.
func resolveSubPath(volumePath, rel string) (root, resolved string, err error) {
	root, err = filepath.EvalSymlinks(volumePath)
	if err != nil {
		return "", "", fmt.Errorf("resolving the volume: %w", err)
	}
	rootInfo, err := os.Stat(root)
	if err != nil {
		return "", "", err
	}
	cur := root
	for _, elem := range strings.Split(filepath.Clean(rel), "/") {
		if elem == "." || elem == "" {
			continue
		}
		next := filepath.Join(cur, elem)
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// The root's mode with its setgid and sticky bits, as the kubelet's SafeMakeDir:
			// an fsGroup volume's subPath is the group's, and group-writable, like the root.
			// Made beneath its parent opened without following symlinks: a sibling container
			// that swaps the parent for a symlink meanwhile gets a refusal, not a directory
			// made where the symlink points.
			perm := rootInfo.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSetuid | fs.ModeSticky)
			parent, err := filepath.Rel(root, cur)
			if err != nil {
				return "", "", err
			}
			if err := mkdirBeneath(root, parent, elem, perm); err != nil {
				return "", "", fmt.Errorf("creating %s: %w", next, err)
			}
		case err != nil:
			return "", "", err
		case info.Mode()&fs.ModeSymlink != 0:
			resolved, err := filepath.EvalSymlinks(next)
			if errors.Is(err, fs.ErrNotExist) {
				// A dangling link: where it points may be outside; do not create it.
				target, _ := os.Readlink(next)
				return "", "", fmt.Errorf("%s is a symlink to %q, which does not exist", elem, target)
			}
			if err != nil {
				return "", "", err
			}
			if !within(resolved, root) {
				return "", "", ErrOutsideVolume
			}
			next = resolved
		}
		cur = next
	}
	if !within(cur, root) {
		return "", "", ErrOutsideVolume
	}
	return root, cur, nil
}

// containerField names container name in the pod spec: spec.containers[i],
// spec.initContainers[i] or spec.ephemeralContainers[i].
func containerField(pod *corev1.Pod, name string) string {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return fmt.Sprintf("spec.containers[%d]", i)
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return fmt.Sprintf("spec.initContainers[%d]", i)
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return fmt.Sprintf("spec.ephemeralContainers[%d]", i)
		}
	}
	return fmt.Sprintf("container %q", name)
}

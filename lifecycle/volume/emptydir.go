package volume

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podutil"
)

// emptyDirPerm is the kubelet's mode for an emptyDir (and for the directory of every volume
// it wraps in one): any container user may write.
const emptyDirPerm os.FileMode = 0o777

// setupEmptyDir makes the emptyDir volume i of pod.
func (m *Manager) setupEmptyDir(ctx context.Context, pod *corev1.Pod, i int, allocatable corev1.ResourceList) (string, []string, error) {
	v := &pod.Spec.Volumes[i]
	src := v.EmptyDir
	field := fmt.Sprintf("spec.volumes[%d].emptyDir", i)
	dir := m.volumeDir(pod.UID, pluginEmptyDir, v.Name)

	var warnings []string
	switch src.Medium {
	case corev1.StorageMediumDefault:
		if err := makeVolumeDir(dir); err != nil {
			return "", nil, err
		}
		if src.SizeLimit != nil && !src.SizeLimit.IsZero() {
			warnings = append(warnings, fmt.Sprintf(
				"%s.sizeLimit %s is not enforced: the volume is a plain directory on the node's disk and nothing evicts the pod when it grows past the limit",
				field, src.SizeLimit.String()))
		}
	case corev1.StorageMediumMemory:
		size := memoryVolumeSize(pod, src.SizeLimit, allocatable)
		w, err := m.makeMemoryDir(ctx, dir, size, field+".medium")
		if err != nil {
			return "", nil, err
		}
		warnings = w
	default:
		return "", nil, refuse(field+".medium", string(src.Medium),
			"not supported on this node (supported: \"\" for the node's disk, Memory for tmpfs)")
	}
	// The kubelet's emptyDir with an fsGroup: group rw and setgid, so that what containers
	// create belongs to the group. Only while the root does not show it yet — the first Setup,
	// or one after a crash before it was done — as the kubelet does it once (its ready marker):
	// a Setup after an agent restart leaves what containers did to their files alone.
	if err := applyFSGroup(ctx, dir, podOwnership(pod).fsGroup, false, true); err != nil {
		return "", nil, fmt.Errorf("%s: applying fsGroup: %w", field, err)
	}
	return dir, warnings, nil
}

// makeVolumeDir creates dir (and the pod's volume directories above it) with the emptyDir's
// mode, whatever the umask. As the kubelet's setupDir, only permission bits that differ are
// set: the setgid bit an fsGroup gave the directory stays (chmod would clear it).
func makeVolumeDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return fmt.Errorf("creating volume directory: %w", err)
	}
	if err := os.Mkdir(dir, emptyDirPerm); err != nil && !os.IsExist(err) {
		return fmt.Errorf("creating volume directory: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("creating volume directory: %w", err)
	}
	if info.Mode().Perm() != emptyDirPerm {
		if err := os.Chmod(dir, emptyDirPerm); err != nil {
			return fmt.Errorf("setting volume directory mode: %w", err)
		}
	}
	return nil
}

// makeMemoryDir makes dir a tmpfs of size bytes (0: the kernel's default, half the RAM), as
// the kubelet does for emptyDir medium Memory and for the secret, downwardAPI and projected
// volumes it wraps in one. A tmpfs already mounted there is kept with its content (Setup after
// an agent restart). Without the right to mount, dir is a plain directory and the warning
// says so, naming field.
func (m *Manager) makeMemoryDir(ctx context.Context, dir string, size int64, field string) ([]string, error) {
	if err := makeVolumeDir(dir); err != nil {
		return nil, err
	}
	if !m.canMount {
		return []string{fmt.Sprintf(
			"%s: the volume is a plain directory on the node's disk, not tmpfs: this agent cannot mount (it is not root in the initial user namespace)",
			field)}, nil
	}
	fsType, err := mountedAt(dir)
	if err != nil {
		return nil, err
	}
	if fsType == "tmpfs" {
		return nil, nil
	}
	opts := ""
	if size > 0 {
		opts = fmt.Sprintf("size=%d", size)
	}
	klog.FromContext(ctx).V(3).Info("Mounting tmpfs for a volume", "path", dir, "options", opts)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		return nil, fmt.Errorf("mounting tmpfs at %s: %w", dir, err)
	}
	return nil, nil
}

// memoryVolumeSize is the kubelet's tmpfs size for a memory-backed volume: the smallest of the
// node's allocatable memory, the pod's memory limit and the volume's sizeLimit, each counted
// only when set and positive. 0 means no size option.
func memoryVolumeSize(pod *corev1.Pod, sizeLimit *resource.Quantity, allocatable corev1.ResourceList) int64 {
	var size int64
	smaller := func(q int64) {
		if q > 0 && (size == 0 || q < size) {
			size = q
		}
	}
	if mem, ok := allocatable[corev1.ResourceMemory]; ok {
		smaller(mem.Value())
	}
	smaller(podMemoryLimit(pod))
	if sizeLimit != nil {
		smaller(sizeLimit.Value())
	}
	return size
}

// podMemoryLimit is the pod's memory limit as the kubelet sizes its cgroup: the pod-level
// limit when set; otherwise, when every container has one, the larger of what runs together
// (app containers plus restartable init containers, the sidecars) and the largest single
// init container plus the sidecars started before it. 0 when the pod has no limit.
func podMemoryLimit(pod *corev1.Pod) int64 {
	if pod.Spec.Resources != nil {
		if q, ok := pod.Spec.Resources.Limits[corev1.ResourceMemory]; ok {
			return q.Value()
		}
	}
	limit := func(c *corev1.Container) (int64, bool) {
		q, ok := c.Resources.Limits[corev1.ResourceMemory]
		return q.Value(), ok && q.Value() > 0
	}
	var sidecars, initPeak int64
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		l, ok := limit(c)
		if !ok {
			return 0
		}
		if podutil.IsSidecar(c) {
			sidecars += l
			continue
		}
		initPeak = max(initPeak, sidecars+l)
	}
	apps := sidecars
	for i := range pod.Spec.Containers {
		l, ok := limit(&pod.Spec.Containers[i])
		if !ok {
			return 0
		}
		apps += l
	}
	return max(apps, initPeak)
}

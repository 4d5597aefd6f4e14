package volume

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// makeNestedMountpoints creates, in the directory of volume name, the directories where a
// container mounts another volume inside this one (name at /etc/app, another at
// /etc/app/extra): the kubelet's MakeNestedMountpoints. The volume is mounted read-only, so
// the mount point has to exist before the container starts. Only the first level below each
// mount of this volume is made (a mount nested in a nested mount belongs to that one).
// They are made before the volume's files, so a key of the same name does not replace the
// mount point (the kubelet's order too). A path through something that is not a directory,
// or through a reserved ".." name, is skipped: the container's mount then fails and says so.
func makeNestedMountpoints(ctx context.Context, pod *corev1.Pod, name, dir string) {
	for _, rel := range nestedMountpoints(pod, name) {
		if err := mkdirInside(dir, rel); err != nil {
			klog.FromContext(ctx).V(2).Info("Not creating a nested mount point", "pod", klog.KObj(pod), "volume", name, "path", rel, "reason", err.Error())
		}
	}
}

func nestedMountpoints(pod *corev1.Pod, name string) []string {
	var out []string
	visit := func(mounts []corev1.VolumeMount) {
		var all, mine []string
		for _, vm := range mounts {
			p := filepath.Clean("/" + vm.MountPath)
			all = append(all, p)
			if vm.Name == name {
				mine = append(mine, p)
			}
		}
		sort.Strings(all)
		for _, my := range mine {
			prefix := strings.TrimSuffix(my, "/") + "/"
			var nested []string
			for _, p := range all {
				if !strings.HasPrefix(p, prefix) {
					continue
				}
				inner := false
				for _, n := range nested {
					if strings.HasPrefix(p, n+"/") {
						inner = true
						break
					}
				}
				if !inner {
					nested = append(nested, p)
					out = append(out, strings.TrimPrefix(p, prefix))
				}
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		visit(pod.Spec.InitContainers[i].VolumeMounts)
	}
	for i := range pod.Spec.Containers {
		visit(pod.Spec.Containers[i].VolumeMounts)
	}
	return out
}

// mkdirInside creates the directories of rel below root (0755, as the kubelet), following no
// symlink: an element that exists and is not a directory stops it.
func mkdirInside(root, rel string) error {
	cur := root
	for _, elem := range strings.Split(rel, "/") {
		if elem == "" || elem == "." || elem == ".." || strings.HasPrefix(elem, "..") {
			return errors.New("reserved or escaping path element")
		}
		cur = filepath.Join(cur, elem)
		info, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !info.IsDir():
			return errors.New(cur + " exists and is not a directory")
		}
	}
	return nil
}

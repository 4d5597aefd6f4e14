// Package hostpaths hides paths of the machine behind empty tmpfs mounts in a run's own mount
// namespace, for programs that write where they are built to write whatever they are told: the
// kubelet's device-plugin and container-log directories (bench/kubelet), kubeadm's
// /etc/kubernetes and its etcd's /var/lib/etcd (test/e2ekubeadm). Nothing they write reaches
// the machine's filesystem, and the mounts go with the namespace.
//
// A path that does not exist needs a directory on the machine to mount on: MissingDirs, called
// in the parent before it starts the namespace, says which directories Mask will create, and
// RemoveDirs removes them once the namespace is gone (never while another namespace still has a
// mount there, nor when anything but empty directories is below them).
//
//	created := hostpaths.MissingDirs([]string{"/etc/kubernetes"}) // parent, before the child
//	defer hostpaths.RemoveDirs(created)                           // parent, after the child
//	err := hostpaths.Mask(hostpaths.Tmpfs{Path: "/etc/kubernetes", Mode: 0o755, Size: "64m"}) // child, mounts private
package hostpaths

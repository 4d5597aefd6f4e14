// Package kubeadmnode sets up a kubeadm control-plane node for vk-static to be the kubelet of,
// in network and mount namespaces of the caller's own (test/support/netns), for the end-to-end
// test (test/e2ekubeadm) and `make demo`.
//
// kubeadm's paths are constants: it writes certificates, kubeconfigs and manifests under
// /etc/kubernetes, and its etcd manifest keeps its data in /var/lib/etcd. So the node hides
// those paths behind tmpfs mounts of the namespace ([Masks], with test/support/hostpaths):
// nothing kubeadm or its control plane writes reaches the machine's /etc or /var/lib. Its API
// server certificate and etcd's URLs name the node's address, never 127.0.0.1: the address is
// the namespace's own (netns.NodeIP).
//
// kubeadm's containers run bare command names (kube-apiserver, etcd, …) and set no PATH, so the
// process provider's supervisor looks them up in its default search path, whose first
// directory is /usr/local/sbin ([PathDir]). [LinkIntoPath] puts links there, in its tmpfs, to
// the test control plane's binaries and to kube-scheduler from kubeadm's cache. Each
// container's mount namespace is a copy of the agent's: the containers see the links, the
// machine does not.
package kubeadmnode

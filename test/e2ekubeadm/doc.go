// Package e2ekubeadm runs vk-static as the kubelet of a kubeadm control plane, the most common
// set of static pods there is: kubeadm (the release of the test control plane, built by
// `make kubeadm-testbin`) writes its certificates, kubeconfigs and the unmodified manifests of
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler into
// /etc/kubernetes/manifests, and the agent, started with kubeadm's kubelet.conf before any API
// server exists, runs them with the process provider, registers its Node with the API server it
// has just started and makes their mirror pods once that answers. The test then checks what a
// control-plane node must do: kubectl logs through the API server, scheduling by the static
// scheduler, an agent restart that keeps the control plane's processes, an edited manifest
// that replaces its pod and mirror, a removed one that takes its mirror with it, and a second
// agent that joins with a bootstrap token from `kubeadm token create`.
//
// kubeadm's paths are constants (/etc/kubernetes and its manifests directory; /var/lib/etcd is
// the default the manifests are left with), and kubeadm's API server certificate and etcd name
// the node's address, never 127.0.0.1. So TestMain re-executes the test binary in network and
// mount namespaces of its own (test/support/netns: root is needed, and its absence is a
// failure, not a skip), where the node's address is netns.NodeIP on the namespace's lo, and
// hides /etc/kubernetes, /var/lib/etcd (a 1 GiB tmpfs: etcd preallocates 64 MB write-ahead log
// segments) and /usr/local/sbin behind tmpfs mounts of that namespace (test/support/hostpaths):
// nothing kubeadm or its control plane writes reaches the machine's /etc or /var/lib. The
// parent creates the mount points the machine lacks before the child runs and removes them after.
//
// kubeadm's containers run bare command names (kube-apiserver, etcd, …) and set no PATH, so the
// process provider's supervisor looks them up in its default search path, whose first
// directory is /usr/local/sbin. The test puts symbolic links there, in its tmpfs, to the test
// control plane's binaries ($VK_STATIC_TESTBIN: etcd, kube-apiserver, kube-controller-manager)
// and to kube-scheduler from kubeadm's cache ($VK_STATIC_KUBEADMBIN). Each container's mount
// namespace is a copy of the agent's, which is the test's: the containers see the links, the
// machine does not. kubeadm itself runs without the *_proxy variables, which it would otherwise
// copy into every manifest.
//
// The agent's own state stays in the test's temporary directories (--root-dir, --pod-logs-dir,
// as test/support/agentproc passes them), and the test ends by removing the manifests and
// waiting for the control plane's processes to stop; what is still running then is killed and
// fails the test.
package e2ekubeadm

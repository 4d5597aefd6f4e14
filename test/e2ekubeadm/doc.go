// Package e2ekubeadm runs vk-static as the kubelet of a kubeadm control plane, the most common
// set of static pods there is: kubeadm (the release of the test control plane, built by
// `make kubeadm-testbin`) writes its certificates, kubeconfigs and the unmodified manifests of
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler into
// /etc/kubernetes/manifests, and the agent, started with kubeadm's kubelet.conf before any API
// server exists, runs them, registers its Node with the API server it has just started and
// makes their mirror pods once that answers. The test then checks what a control-plane node
// must do: kubectl logs through the API server, scheduling by the static scheduler, an agent
// restart that keeps the control plane's containers, an edited manifest that replaces its pod
// and mirror, a removed one that takes its mirror with it, and a second agent that joins with
// a bootstrap token from `kubeadm token create`.
//
// The scenario runs twice, once per provider (testControlPlane with a nodeRuntime):
//
//   - TestKubeadmControlPlane: --provider process. The containers are host processes; an
//     agent restart keeps each one's pid.
//   - TestKubeadmControlPlaneCRI: --provider cri, on a containerd of the test's own
//     (test/support/testcontainerd) started in the test's namespaces. kubeadm's images
//     (registry.k8s.io/kube-apiserver, kube-controller-manager and kube-scheduler at
//     v1.36.3, etcd:3.6.8-0, pause:3.10.2) are built as the conformance harness builds its
//     images, locally, each a single layer holding the same static binary the process run
//     uses (test/support/kubeimages), and imported with ctr, so that the manifests' images
//     resolve with their imagePullPolicy IfNotPresent and nothing is pulled (each
//     container's imageID is the imported image's). An agent
//     restart keeps each container's ID, its containerd task's pid and its start time.
//     containerd has a bridge CNI network (as test/e2ecri's): its runtime then reports
//     NetworkReady, which the Node's Ready follows, and the scheduled API pod, the only pod
//     not on the host's network, runs with an address of the pod network and a test image
//     (test/support/testimage's workload, imported too). The join is left out: it is about
//     the agent's credentials, which the provider does not change.
//
// The node is test/support/kubeadmnode's, as make demo's: kubeadm's paths are constants and its
// API server certificate and etcd name the node's address, never 127.0.0.1, so TestMain
// re-executes the test binary in network and mount namespaces of its own (test/support/netns:
// root is needed, and its absence is a failure, not a skip), where the node's address is
// netns.NodeIP on the namespace's lo and kubeadmnode.Masks hide /etc/kubernetes,
// /var/lib/etcd, /usr/local/sbin and /usr/libexec/kubernetes behind tmpfs mounts of that
// namespace: nothing kubeadm or its control plane writes reaches the machine's /etc, /var/lib
// or /usr. Each test mounts fresh tmpfs mounts over those for its own run and unmounts them at
// its end, so the two runs share no certificate, manifest or etcd data. The parent creates the
// mount points the machine lacks before the child runs and removes them after. On the process
// provider the manifests' bare command names resolve through kubeadmnode.LinkIntoPath's links
// in /usr/local/sbin; on CRI through the images' PATH.
//
// The agent's own state stays in the test's temporary directories (--root-dir, --pod-logs-dir,
// as test/support/agentproc passes them), and the test ends by removing the manifests and
// waiting for the control plane to stop: for the process provider, what is still running then
// is killed and fails the test; for CRI, the containerd must hold no sandbox and no container
// before it is stopped.
package e2ekubeadm

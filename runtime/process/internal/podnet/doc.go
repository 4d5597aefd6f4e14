// Package podnet puts a pod's network namespace on the node's pod network through the node's
// CNI plugins and configuration, as containerd's CRI plugin does for the kubelet: the first
// network configuration in the configuration directory (by file name: .conflist, .conf,
// .json), its plugins looked up in the binary directories, ADD when the pod's sandbox is made
// and DEL when it is stopped, with the kubelet's CNI_ARGS (K8S_POD_NAMESPACE, K8S_POD_NAME,
// K8S_POD_INFRA_CONTAINER_ID, K8S_POD_UID) and its host ports as the portMappings capability.
//
//	net := podnet.New(podnet.Config{ConfDir: "/etc/cni/net.d", BinDirs: []string{"/opt/cni/bin"}})
//	ips, err := net.Add(ctx, podnet.Pod{Namespace: "ns", Name: "p", UID: uid, SandboxID: id, NetNS: "/proc/1234/ns/net"})
//	...
//	err = net.Del(ctx, pod) // NetNS may be "" once the namespace is gone
package podnet

package admission

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// allAddresses is a host port's address when it names none.
const allAddresses = "0.0.0.0"

// hostPort is a host port as the scheduler framework keys it.
type hostPort struct {
	ip       string
	protocol corev1.Protocol
	port     int32
}

// hostPorts are the host ports pod holds for its life: its containers' and its sidecars'
// (an init container that runs to completion holds its port only for a while, and the kubelet
// does not count it).
func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	add := func(cs []corev1.Container, holds func(*corev1.Container) bool) {
		for i := range cs {
			if !holds(&cs[i]) {
				continue
			}
			for _, p := range cs[i].Ports {
				if p.HostPort <= 0 {
					continue
				}
				hp := hostPort{ip: p.HostIP, protocol: p.Protocol, port: p.HostPort}
				if hp.ip == "" {
					hp.ip = allAddresses
				}
				if hp.protocol == "" {
					hp.protocol = corev1.ProtocolTCP
				}
				out = append(out, hp)
			}
		}
	}
	add(pod.Spec.InitContainers, podutil.IsSidecar)
	add(pod.Spec.Containers, func(*corev1.Container) bool { return true })
	return out
}

// fitPorts is whether none of pod's host ports is held by an admitted pod: the same protocol
// and port on the same address, or either of them on all addresses.
func fitPorts(pod *corev1.Pod, admitted []*corev1.Pod) bool {
	want := hostPorts(pod)
	if len(want) == 0 {
		return true
	}
	for _, other := range admitted {
		for _, held := range hostPorts(other) {
			for _, w := range want {
				if w.protocol == held.protocol && w.port == held.port &&
					(w.ip == held.ip || w.ip == allAddresses || held.ip == allAddresses) {
					return false
				}
			}
		}
	}
	return true
}

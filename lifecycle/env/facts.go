package env

import corev1 "k8s.io/api/core/v1"

// PodFacts are what the downward API reads that the pod object does not hold yet when a
// container starts: the node's and the pod's addresses, and the node's allocatable resources
// (which stand for a container limit that is not set).
//
// The lists win over the single values when both are set, like the kubelet, which takes
// status.podIP as podIPs[0]; a single value alone serves as a one-element list. Give the lists
// in the order the node prefers its IP families (the kubelet sorts pod IPs that way), primary
// first.
type PodFacts struct {
	// HostIP and HostIPs are the node's addresses (status.hostIP, status.hostIPs).
	HostIP  string
	HostIPs []string
	// PodIP and PodIPs are the pod's addresses (status.podIP, status.podIPs); for a pod on the
	// host network they are the host's.
	PodIP  string
	PodIPs []string
	// Allocatable is the node's allocatable resources, the value of a resourceFieldRef on a
	// limit the container does not set (cpu, memory, ephemeral-storage).
	Allocatable corev1.ResourceList
	// VolumeDirs are the host directories of the pod's volumes by volume name, where Build
	// reads the env files of env[].valueFrom.fileKeyRef (an emptyDir an init container wrote).
	// A fileKeyRef to a volume not in it is an error.
	VolumeDirs map[string]string
	// ServiceEnv are the pod's service environment variables (ServiceEnv), by name: env
	// values may reference them, and those the container does not define itself come last.
	ServiceEnv map[string]string
}

// hostIPs returns the node's addresses, primary first.
func (f PodFacts) hostIPs() []string { return ipList(f.HostIPs, f.HostIP) }

// podIPs returns the pod's addresses, primary first.
func (f PodFacts) podIPs() []string { return ipList(f.PodIPs, f.PodIP) }

func ipList(list []string, single string) []string {
	if len(list) > 0 {
		return list
	}
	if single != "" {
		return []string{single}
	}
	return nil
}

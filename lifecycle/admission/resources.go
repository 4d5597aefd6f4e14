package admission

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

// amounts are quantities by resource in the kubelet's units: millicores for cpu, the value for
// the rest (bytes, units).
type amounts map[corev1.ResourceName]int64

// requests is what pod requests of the resources the kubelet admits on (cpu, memory,
// ephemeral-storage and the scalar resources: extended ones, hugepages), as its scheduler
// framework adds them up: the larger of the init containers' and the sum of the others',
// sidecars counted as the sum, pod-level requests where they are set, and the pod's overhead.
func requests(pod *corev1.Pod) amounts {
	out := amounts{}
	for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		switch {
		case name == corev1.ResourceCPU:
			out[name] = q.MilliValue()
		case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage || scalar(name):
			out[name] = q.Value()
		}
	}
	return out
}

// request is pod's request of name, a pods request being 1 (the kubelet's GetResourceRequest,
// with which its preemption weighs pods).
func request(pod *corev1.Pod, name corev1.ResourceName) int64 {
	if name == corev1.ResourcePods {
		return 1
	}
	return requests(pod)[name]
}

// allocatable is what the node can give pods, in the same units.
func allocatable(node *corev1.Node) amounts {
	out := amounts{}
	for name, q := range node.Status.Allocatable {
		if name == corev1.ResourceCPU {
			out[name] = q.MilliValue()
		} else {
			out[name] = q.Value()
		}
	}
	return out
}

// scalar is a resource the scheduler framework counts beside cpu, memory and
// ephemeral-storage (its IsScalarResourceName): an extended resource, hugepages, a
// kubernetes.io-prefixed one, attachable volumes.
func scalar(name corev1.ResourceName) bool {
	return extended(name) || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) ||
		strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(string(name), corev1.ResourceAttachableVolumesPrefix)
}

// extended is a resource outside the kubernetes.io namespace, such as example.com/gpu (the
// API's IsExtendedResourceName). The kubelet does not refuse a pod for one the node does not
// have at all: such a resource is the cluster's (or a device driver's) to account for.
func extended(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}

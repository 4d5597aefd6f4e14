package env

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-static/vk-static/provider"
)

// ErrUnsupportedResource is wrapped by ResourceValue's error for a resource the downward API
// does not expose.
var ErrUnsupportedResource = errors.New("unsupported container resource")

// ResourceValue resolves a downward API resourceFieldRef as the kubelet does
// (resource.ExtractResourceValueByContainerNameAndNodeAllocatable): the container is
// ref.ContainerName, or containerName when the reference names none (an env var of the
// container itself); looked up among the pod's containers, init containers and ephemeral
// containers. A container the pod does not have is an error that provider.IsNotFound
// recognises.
//
// ref.Resource is limits.cpu, requests.cpu, limits.memory, requests.memory,
// limits.ephemeral-storage, requests.ephemeral-storage, limits.hugepages-<size> or
// requests.hugepages-<size>. The value is the quantity divided by ref.Divisor (1 when unset)
// rounded up: cpu in millicores (so 250m with divisor 1 is "1", with divisor 1m "250"), the
// others in units. A cpu, memory or ephemeral-storage limit the container does not set (or
// sets to zero) is allocatable's; an unset request, or a limit neither sets, is "0".
//
// The kubelet's env path (not its downwardAPI volume path) also lets pod-level limits
// (pod.spec.resources.limits cpu and memory) stand in for allocatable; Build does that.
func ResourceValue(pod *corev1.Pod, containerName string, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	name := ref.ContainerName
	if name == "" {
		name = containerName
	}
	resources, ok := containerResources(pod, name)
	if !ok {
		return "", fmt.Errorf("resourceFieldRef %q: %w", ref.Resource, provider.NotFound("container %q", name))
	}
	return containerResourceValue(resources, ref, allocatable)
}

// containerResourceValue is ResourceValue on the resources of a container already found.
func containerResourceValue(resources corev1.ResourceRequirements, ref *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	limits := make(corev1.ResourceList, len(resources.Limits)+3)
	for n, q := range resources.Limits {
		limits[n] = q
	}
	// An unset (or zero) limit is the node's allocatable. Not for hugepages: they are never
	// overcommitted, so a container asking for them always has a limit.
	for _, n := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, set := limits[n]; set && !q.IsZero() {
			continue
		}
		if q, known := allocatable[n]; known {
			limits[n] = q.DeepCopy()
		}
	}
	return quantityValue(ref, limits, resources.Requests)
}

// containerResources returns the resources of the pod's container called name.
func containerResources(pod *corev1.Pod, name string) (corev1.ResourceRequirements, bool) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return pod.Spec.Containers[i].Resources, true
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return pod.Spec.InitContainers[i].Resources, true
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			return pod.Spec.EphemeralContainers[i].Resources, true
		}
	}
	return corev1.ResourceRequirements{}, false
}

// quantityValue picks ref.Resource out of limits or requests and divides it by the divisor.
func quantityValue(ref *corev1.ResourceFieldSelector, limits, requests corev1.ResourceList) (string, error) {
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if divisor.Sign() < 0 {
		return "", fmt.Errorf("resourceFieldRef %q: divisor %s is negative", ref.Resource, divisor.String())
	}

	kind, resourceName, _ := strings.Cut(ref.Resource, ".")
	var list corev1.ResourceList
	switch kind {
	case "limits":
		list = limits
	case "requests":
		list = requests
	default:
		return "", fmt.Errorf("%w: %q", ErrUnsupportedResource, ref.Resource)
	}
	name := corev1.ResourceName(resourceName)
	switch {
	case name == corev1.ResourceCPU:
		q := list[name]
		// In millicores: a fraction of a core is what cpu divisors (1m, 1) are about.
		return ceilDiv(q.MilliValue(), divisor.MilliValue()), nil
	case name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage,
		strings.HasPrefix(resourceName, corev1.ResourceHugePagesPrefix):
		q := list[name]
		return ceilDiv(q.Value(), divisor.Value()), nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupportedResource, ref.Resource)
}

// ceilDiv is the kubelet's rounding, float division included, so that a value the float
// rounds reads the same here as there.
func ceilDiv(value, divisor int64) string {
	return strconv.FormatInt(int64(math.Ceil(float64(value)/float64(divisor))), 10)
}

package env

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/vk-static/vk-static/provider"
)

func resourcePod() *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{
		Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{
					corev1.ResourceCPU:              resource.MustParse("250m"),
					corev1.ResourceMemory:           resource.MustParse("64Mi"),
					corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
					"hugepages-2Mi":                 resource.MustParse("4Mi"),
				},
				Limits: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("1500m"),
					corev1.ResourceMemory: resource.MustParse("100M"),
					"hugepages-2Mi":       resource.MustParse("4Mi"),
				},
			}},
			{Name: "bare"},
			{Name: "zero-limit", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}}},
		},
		InitContainers: []corev1.Container{
			{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
		},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
	}}
}

func nodeAllocatable() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
}

func TestResourceValue(t *testing.T) {
	tests := []struct {
		name      string
		container string
		ref       corev1.ResourceFieldSelector
		alloc     corev1.ResourceList
		want      string
	}{
		{"cpu request rounds up to a core", "app", corev1.ResourceFieldSelector{Resource: "requests.cpu"}, nodeAllocatable(), "1"},
		{"cpu request in millicores", "app", corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1m")}, nodeAllocatable(), "250"},
		{"cpu limit rounds up", "app", corev1.ResourceFieldSelector{Resource: "limits.cpu"}, nodeAllocatable(), "2"},
		{"cpu limit divisor 100m", "app", corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("100m")}, nodeAllocatable(), "15"},
		{"memory request bytes", "app", corev1.ResourceFieldSelector{Resource: "requests.memory"}, nodeAllocatable(), "67108864"},
		{"memory request Mi", "app", corev1.ResourceFieldSelector{Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}, nodeAllocatable(), "64"},
		{"memory limit rounds up to Mi", "app", corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}, nodeAllocatable(), "96"},
		{"memory limit in M", "app", corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1M")}, nodeAllocatable(), "100"},
		{"ephemeral request Gi", "app", corev1.ResourceFieldSelector{Resource: "requests.ephemeral-storage", Divisor: resource.MustParse("1Gi")}, nodeAllocatable(), "1"},
		{"ephemeral limit from allocatable", "app", corev1.ResourceFieldSelector{Resource: "limits.ephemeral-storage", Divisor: resource.MustParse("1Gi")}, nodeAllocatable(), "100"},
		{"hugepages request", "app", corev1.ResourceFieldSelector{Resource: "requests.hugepages-2Mi", Divisor: resource.MustParse("1Mi")}, nodeAllocatable(), "4"},
		{"hugepages limit", "app", corev1.ResourceFieldSelector{Resource: "limits.hugepages-2Mi"}, nodeAllocatable(), "4194304"},
		{"hugepages not defaulted", "bare", corev1.ResourceFieldSelector{Resource: "limits.hugepages-1Gi"}, nodeAllocatable(), "0"},
		{"unset cpu limit is allocatable", "bare", corev1.ResourceFieldSelector{Resource: "limits.cpu"}, nodeAllocatable(), "4"},
		{"unset memory limit is allocatable", "bare", corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Gi")}, nodeAllocatable(), "8"},
		{"zero limit is allocatable", "zero-limit", corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("1m")}, nodeAllocatable(), "4000"},
		{"unset limit without allocatable is 0", "bare", corev1.ResourceFieldSelector{Resource: "limits.memory"}, nil, "0"},
		{"unset request is 0, not allocatable", "bare", corev1.ResourceFieldSelector{Resource: "requests.cpu"}, nodeAllocatable(), "0"},
		{"ref names another container", "bare", corev1.ResourceFieldSelector{ContainerName: "app", Resource: "requests.cpu", Divisor: resource.MustParse("1m")}, nodeAllocatable(), "250"},
		{"init container", "", corev1.ResourceFieldSelector{ContainerName: "init", Resource: "requests.cpu"}, nodeAllocatable(), "2"},
		{"init container limit defaulted", "", corev1.ResourceFieldSelector{ContainerName: "init", Resource: "limits.cpu"}, nodeAllocatable(), "4"},
		{"ephemeral container", "debug", corev1.ResourceFieldSelector{Resource: "limits.cpu"}, nodeAllocatable(), "4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := resourcePod()
			before := pod.DeepCopy()
			got, err := ResourceValue(pod, tt.container, &tt.ref, tt.alloc)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, before, pod, "the pod is not changed")
		})
	}
}

func TestResourceValueErrors(t *testing.T) {
	tests := []struct {
		name      string
		container string
		ref       corev1.ResourceFieldSelector
		wantErr   error
	}{
		{"unknown container", "nope", corev1.ResourceFieldSelector{Resource: "limits.cpu"}, provider.ErrNotFound},
		{"unknown named container", "app", corev1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}, provider.ErrNotFound},
		{"unknown resource", "app", corev1.ResourceFieldSelector{Resource: "limits.gpu"}, ErrUnsupportedResource},
		{"no kind", "app", corev1.ResourceFieldSelector{Resource: "cpu"}, ErrUnsupportedResource},
		{"bad kind", "app", corev1.ResourceFieldSelector{Resource: "capacity.cpu"}, ErrUnsupportedResource},
		{"negative divisor", "app", corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("-1")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResourceValue(resourcePod(), tt.container, &tt.ref, nodeAllocatable())
			require.Error(t, err)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Contains(t, err.Error(), tt.ref.Resource)
		})
	}
}

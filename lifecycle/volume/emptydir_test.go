package volume

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestMemoryVolumeSize(t *testing.T) {
	limits := func(mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	always := corev1.ContainerRestartPolicyAlways
	tests := []struct {
		name        string
		spec        corev1.PodSpec
		sizeLimit   string
		allocatable string
		want        int64
	}{
		{name: "nothing known: the kernel's default", want: 0},
		{name: "allocatable", allocatable: "1Gi", want: 1 << 30},
		{name: "sizeLimit below allocatable", allocatable: "1Gi", sizeLimit: "64Mi", want: 64 << 20},
		{name: "sizeLimit above allocatable", allocatable: "1Gi", sizeLimit: "2Gi", want: 1 << 30},
		{name: "pod limit: sum of containers", allocatable: "1Gi",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: limits("100Mi")}, {Resources: limits("28Mi")}}}, want: 128 << 20},
		{name: "a container without a limit: no pod limit", allocatable: "1Gi",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: limits("100Mi")}, {}}}, want: 1 << 30},
		{name: "an init container larger than the app containers", allocatable: "1Gi",
			spec: corev1.PodSpec{InitContainers: []corev1.Container{{Resources: limits("512Mi")}}, Containers: []corev1.Container{{Resources: limits("100Mi")}}}, want: 512 << 20},
		{name: "sidecars run with the app containers", allocatable: "1Gi",
			spec: corev1.PodSpec{InitContainers: []corev1.Container{{Resources: limits("50Mi"), RestartPolicy: &always}}, Containers: []corev1.Container{{Resources: limits("100Mi")}}}, want: 150 << 20},
		{name: "pod-level limit", allocatable: "1Gi", sizeLimit: "300Mi",
			spec: corev1.PodSpec{Resources: ptr(limits("200Mi")), Containers: []corev1.Container{{}}}, want: 200 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sl *resource.Quantity
			if tt.sizeLimit != "" {
				sl = ptr(resource.MustParse(tt.sizeLimit))
			}
			alloc := corev1.ResourceList{}
			if tt.allocatable != "" {
				alloc[corev1.ResourceMemory] = resource.MustParse(tt.allocatable)
			}
			assert.Equal(t, tt.want, memoryVolumeSize(&corev1.Pod{Spec: tt.spec}, sl, alloc))
		})
	}
}

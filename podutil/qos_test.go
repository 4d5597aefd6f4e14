package podutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQOSClass(t *testing.T) {
	res := func(req, lim corev1.ResourceList) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: req, Limits: lim}
	}
	list := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	pod := func(cs ...corev1.Container) *corev1.Pod { return &corev1.Pod{Spec: corev1.PodSpec{Containers: cs}} }
	assert.Equal(t, corev1.PodQOSBestEffort, QOSClass(pod(corev1.Container{})))
	assert.Equal(t, corev1.PodQOSGuaranteed, QOSClass(pod(corev1.Container{Resources: res(list("1", "1Gi"), list("1", "1Gi"))})))
	assert.Equal(t, corev1.PodQOSBurstable, QOSClass(pod(corev1.Container{Resources: res(nil, list("", "48Mi"))})))
	assert.Equal(t, corev1.PodQOSBurstable, QOSClass(pod(corev1.Container{Resources: res(list("1", "1Gi"), list("2", "1Gi"))})))
	assert.Equal(t, corev1.PodQOSBurstable, QOSClass(pod(corev1.Container{Resources: res(list("1", "1Gi"), list("1", "1Gi"))}, corev1.Container{})))
}

package cgroup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func res(req, lim corev1.ResourceList) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: req, Limits: lim}
}

func list(cpu, mem string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

// The kubelet's numbers: 1024 shares a CPU (at least 2), a quota of limit × 100 ms (at least
// 1 ms), the memory limit with no swap beyond it.
func TestContainerResources(t *testing.T) {
	r := containerResources(&corev1.Container{Resources: res(list("250m", "64Mi"), list("500m", "128Mi"))})
	assert.EqualValues(t, 256, r.CpuShares)
	assert.EqualValues(t, 100000, r.CpuPeriod)
	assert.EqualValues(t, 50000, r.CpuQuota)
	assert.EqualValues(t, 128<<20, r.Memory)
	assert.EqualValues(t, 128<<20, r.MemorySwap)

	r = containerResources(&corev1.Container{Resources: res(nil, list("1m", ""))})
	assert.EqualValues(t, 2, r.CpuShares, "a limit alone is the request too, and shares are at least 2")
	assert.EqualValues(t, 1000, r.CpuQuota, "the least quota")

	r = containerResources(&corev1.Container{})
	assert.EqualValues(t, 2, r.CpuShares)
	assert.Zero(t, r.CpuQuota)
	assert.Zero(t, r.Memory)
}

// The pod's cgroup: shares from the sum of requests, quota and memory only when every container
// has that limit, the pids limit.
func TestPodResources(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Resources: res(list("100m", ""), list("200m", "64Mi"))},
		{Resources: res(list("300m", ""), list("", "32Mi"))},
	}}}
	r := podResources(pod, corev1.PodQOSBurstable, 100)
	assert.EqualValues(t, 409, r.CpuShares)
	assert.Zero(t, r.CpuQuota, "one container has no CPU limit")
	assert.EqualValues(t, 96<<20, r.Memory)
	assert.EqualValues(t, 100, *r.PidsLimit)

	assert.EqualValues(t, 2, podResources(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{}}}}, corev1.PodQOSBestEffort, 0).CpuShares)
	assert.Nil(t, podResources(&corev1.Pod{}, corev1.PodQOSBestEffort, -1).PidsLimit)
}

// Only a workload the kernel killed (137) in a cgroup that counts an OOM kill ended by it.
func TestEndedByOOMKill(t *testing.T) {
	assert.True(t, EndedByOOMKill(1, 137))
	assert.False(t, EndedByOOMKill(1, 0), "a child was killed, the shell completed")
	assert.False(t, EndedByOOMKill(2, 1), "a child was killed, the shell failed on its own")
	assert.False(t, EndedByOOMKill(0, 137), "killed by someone else")
}

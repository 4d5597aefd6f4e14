package cgroup

import (
	"github.com/opencontainers/cgroups"
	corev1 "k8s.io/api/core/v1"
)

// The kubelet's constants (pkg/kubelet/cm): shares per CPU, the least shares a cgroup gets, the
// CFS period, and the least quota.
const (
	sharesPerCPU  = 1024
	minShares     = 2
	maxShares     = 262144
	quotaPeriod   = 100000 // µs: 100 ms
	minQuotaUsecs = 1000
)

// milliCPUToShares is the kubelet's MilliCPUToShares: a CPU request as cpu.shares.
func milliCPUToShares(milli int64) uint64 {
	if milli == 0 {
		return minShares
	}
	shares := milli * sharesPerCPU / 1000
	switch {
	case shares < minShares:
		return minShares
	case shares > maxShares:
		return maxShares
	}
	return uint64(shares)
}

// milliCPUToQuota is the kubelet's MilliCPUToQuota: a CPU limit as the CFS quota per period.
func milliCPUToQuota(milli, period int64) int64 {
	if milli == 0 {
		return 0
	}
	quota := milli * period / 1000
	if quota < minQuotaUsecs {
		quota = minQuotaUsecs
	}
	return quota
}

// containerResources maps a container's resources as the kubelet's kuberuntime does for a
// Linux container: the CPU request (the limit when only that is set) as shares, the CPU limit
// as quota, the memory limit with no swap beyond it.
func containerResources(c *corev1.Container) *cgroups.Resources {
	r := &cgroups.Resources{}
	if c == nil {
		r.CpuShares = minShares
		return r
	}
	cpuReq, cpuLim := c.Resources.Requests.Cpu(), c.Resources.Limits.Cpu()
	req := cpuReq.MilliValue()
	if req == 0 && !cpuLim.IsZero() {
		req = cpuLim.MilliValue()
	}
	r.CpuShares = milliCPUToShares(req)
	if !cpuLim.IsZero() {
		r.CpuPeriod, r.CpuQuota = quotaPeriod, milliCPUToQuota(cpuLim.MilliValue(), quotaPeriod)
	}
	if mem := c.Resources.Limits.Memory(); !mem.IsZero() {
		r.Memory = mem.Value()
		r.MemorySwap = r.Memory
	}
	return r
}

// podResources maps a pod's resources as the kubelet's ResourceConfigForPod: shares from the
// sum of CPU requests, a quota and a memory limit only when every container sets that limit
// (their sum; an init container's own when it is larger), and the pids limit.
func podResources(pod *corev1.Pod, qos corev1.PodQOSClass, pidsLimit int64) *cgroups.Resources {
	var cpuReq, cpuLim, memLim int64
	cpuLimited, memLimited := true, true
	for _, c := range pod.Spec.Containers {
		cpuReq += c.Resources.Requests.Cpu().MilliValue()
		if l := c.Resources.Limits.Cpu(); l.IsZero() {
			cpuLimited = false
		} else {
			cpuLim += l.MilliValue()
		}
		if l := c.Resources.Limits.Memory(); l.IsZero() {
			memLimited = false
		} else {
			memLim += l.Value()
		}
	}
	for _, c := range pod.Spec.InitContainers {
		// Init containers run one at a time: the pod needs the largest of them, or the sum of
		// its containers.
		cpuReq = max(cpuReq, c.Resources.Requests.Cpu().MilliValue())
		if l := c.Resources.Limits.Cpu(); l.IsZero() {
			cpuLimited = false
		} else {
			cpuLim = max(cpuLim, l.MilliValue())
		}
		if l := c.Resources.Limits.Memory(); l.IsZero() {
			memLimited = false
		} else {
			memLim = max(memLim, l.Value())
		}
	}
	r := &cgroups.Resources{CpuShares: milliCPUToShares(cpuReq)}
	if qos == corev1.PodQOSBestEffort {
		r.CpuShares = minShares
	}
	if cpuLimited && cpuLim > 0 {
		r.CpuPeriod, r.CpuQuota = quotaPeriod, milliCPUToQuota(cpuLim, quotaPeriod)
	}
	if memLimited && memLim > 0 {
		r.Memory = memLim
	}
	if pidsLimit > 0 {
		r.PidsLimit = &pidsLimit
	}
	return r
}

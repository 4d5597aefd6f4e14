package eviction

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's ranking of pods for eviction (pkg/kubelet/eviction/helpers.go): the pod first
// in the ranking is the one evicted.

// statsFunc is a pod's usage as measured, false when it was not.
type statsFunc func(pod *corev1.Pod) (statsv1alpha1.PodStats, bool)

// rankFunc orders pods for eviction, the first to evict first.
type rankFunc func(pods []*corev1.Pod, stats statsFunc)

// cmpFunc is negative when p1 is to be evicted before p2, positive after, 0 when they tie.
type cmpFunc func(p1, p2 *corev1.Pod) int

// statsByUID is the statsFunc of measured pods.
func statsByUID(all []statsv1alpha1.PodStats) statsFunc {
	byUID := make(map[string]statsv1alpha1.PodStats, len(all))
	for _, s := range all {
		byUID[s.PodRef.UID] = s
	}
	return func(pod *corev1.Pod) (statsv1alpha1.PodStats, bool) {
		s, ok := byUID[string(pod.UID)]
		return s, ok
	}
}

// orderedBy sorts pods by the first of cmp that tells them apart.
func orderedBy(pods []*corev1.Pod, cmp ...cmpFunc) {
	sort.SliceStable(pods, func(i, j int) bool {
		for _, c := range cmp[:len(cmp)-1] {
			if r := c(pods[i], pods[j]); r != 0 {
				return r < 0
			}
		}
		return cmp[len(cmp)-1](pods[i], pods[j]) < 0
	})
}

// cmpBool places true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// priority places the lower priority first.
func priority(p1, p2 *corev1.Pod) int {
	a, b := podPriority(p1), podPriority(p2)
	switch {
	case a == b:
		return 0
	case a > b:
		return 1
	}
	return -1
}

// byStats compares two measured pods with f; a pod that was not measured goes first.
func byStats(stats statsFunc, f func(p1 *corev1.Pod, s1 statsv1alpha1.PodStats, p2 *corev1.Pod, s2 statsv1alpha1.PodStats) int) cmpFunc {
	return func(p1, p2 *corev1.Pod) int {
		s1, ok1 := stats(p1)
		s2, ok2 := stats(p2)
		if !ok1 || !ok2 {
			return cmpBool(!ok1, !ok2)
		}
		return f(p1, s1, p2, s2)
	}
}

// exceedMemoryRequests places a pod whose working set is above its memory request first.
func exceedMemoryRequests(stats statsFunc) cmpFunc {
	return byStats(stats, func(p1 *corev1.Pod, s1 statsv1alpha1.PodStats, p2 *corev1.Pod, s2 statsv1alpha1.PodStats) int {
		r1, r2 := podRequest(p1, corev1.ResourceMemory), podRequest(p2, corev1.ResourceMemory)
		return cmpBool(memoryUsage(s1.Memory).Cmp(r1) > 0, memoryUsage(s2.Memory).Cmp(r2) > 0)
	})
}

// memory places the pod using the most memory above its request first.
func memory(stats statsFunc) cmpFunc {
	return byStats(stats, func(p1 *corev1.Pod, s1 statsv1alpha1.PodStats, p2 *corev1.Pod, s2 statsv1alpha1.PodStats) int {
		m1, m2 := memoryUsage(s1.Memory), memoryUsage(s2.Memory)
		m1.Sub(podRequest(p1, corev1.ResourceMemory))
		m2.Sub(podRequest(p2, corev1.ResourceMemory))
		return m2.Cmp(*m1)
	})
}

// process places the pod with the most processes first.
func process(stats statsFunc) cmpFunc {
	return byStats(stats, func(_ *corev1.Pod, s1 statsv1alpha1.PodStats, _ *corev1.Pod, s2 statsv1alpha1.PodStats) int {
		a, b := processUsage(s1.ProcessStats), processUsage(s2.ProcessStats)
		switch {
		case a == b:
			return 0
		case a > b:
			return -1
		}
		return 1
	})
}

// fsStatsType is a part of a pod's disk usage.
type fsStatsType string

const (
	fsStatsRoot              fsStatsType = "root"              // the containers' writable layers
	fsStatsLogs              fsStatsType = "logs"              // the containers' logs
	fsStatsLocalVolumeSource fsStatsType = "localVolumeSource" // emptyDir, hostPath and other local volumes
)

// exceedDiskRequests places a pod whose disk usage (of the parts measured) is above its
// ephemeral-storage request first.
func exceedDiskRequests(stats statsFunc, parts []fsStatsType, res corev1.ResourceName) cmpFunc {
	return byStats(stats, func(p1 *corev1.Pod, s1 statsv1alpha1.PodStats, p2 *corev1.Pod, s2 statsv1alpha1.PodStats) int {
		u1, u2 := podDiskUsage(s1, p1, parts)[res], podDiskUsage(s2, p2, parts)[res]
		return cmpBool(u1.Cmp(podRequest(p1, res)) > 0, u2.Cmp(podRequest(p2, res)) > 0)
	})
}

// disk places the pod using the most disk (of the parts measured) above its ephemeral-storage
// request first.
func disk(stats statsFunc, parts []fsStatsType, res corev1.ResourceName) cmpFunc {
	return byStats(stats, func(p1 *corev1.Pod, s1 statsv1alpha1.PodStats, p2 *corev1.Pod, s2 statsv1alpha1.PodStats) int {
		u1, u2 := podDiskUsage(s1, p1, parts)[res], podDiskUsage(s2, p2, parts)[res]
		u1.Sub(podRequest(p1, corev1.ResourceEphemeralStorage))
		u2.Sub(podRequest(p2, corev1.ResourceEphemeralStorage))
		return u2.Cmp(u1)
	})
}

// rankMemoryPressure ranks by usage above requests, then priority, then usage above requests.
func rankMemoryPressure(pods []*corev1.Pod, stats statsFunc) {
	orderedBy(pods, exceedMemoryRequests(stats), priority, memory(stats))
}

// rankPIDPressure ranks by priority, then process count.
func rankPIDPressure(pods []*corev1.Pod, stats statsFunc) {
	orderedBy(pods, priority, process(stats))
}

// rankDiskPressure ranks by disk usage above requests, then priority, then disk usage above
// requests, counting parts.
func rankDiskPressure(parts []fsStatsType, res corev1.ResourceName) rankFunc {
	return func(pods []*corev1.Pod, stats statsFunc) {
		orderedBy(pods, exceedDiskRequests(stats, parts, res), priority, disk(stats, parts, res))
	}
}

// signalRankFuncs are the kubelet's buildSignalToRankFunc (without a split container fs): with
// a dedicated imagefs, nodefs pressure counts the logs and local volumes and imagefs pressure
// the writable layers; without one, both count everything.
func signalRankFuncs(dedicatedImageFs bool) map[Signal]rankFunc {
	out := map[Signal]rankFunc{
		SignalMemoryAvailable: rankMemoryPressure,
		SignalPIDAvailable:    rankPIDPressure,
	}
	nodefs := []fsStatsType{fsStatsRoot, fsStatsLogs, fsStatsLocalVolumeSource}
	imagefs := nodefs
	if dedicatedImageFs {
		nodefs = []fsStatsType{fsStatsLogs, fsStatsLocalVolumeSource}
		imagefs = []fsStatsType{fsStatsRoot}
	}
	out[SignalNodeFsAvailable] = rankDiskPressure(nodefs, corev1.ResourceEphemeralStorage)
	out[SignalNodeFsInodesFree] = rankDiskPressure(nodefs, resourceInodes)
	out[SignalImageFsAvailable] = rankDiskPressure(imagefs, corev1.ResourceEphemeralStorage)
	out[SignalImageFsInodesFree] = rankDiskPressure(imagefs, resourceInodes)
	return out
}

func memoryUsage(m *statsv1alpha1.MemoryStats) *resource.Quantity {
	if m == nil || m.WorkingSetBytes == nil {
		return &resource.Quantity{Format: resource.BinarySI}
	}
	return resource.NewQuantity(int64(*m.WorkingSetBytes), resource.BinarySI) //nolint:gosec // sizes fit
}

func processUsage(p *statsv1alpha1.ProcessStats) uint64 {
	if p == nil || p.ProcessCount == nil {
		return 0
	}
	return *p.ProcessCount
}

func diskUsage(fs *statsv1alpha1.FsStats) *resource.Quantity {
	if fs == nil || fs.UsedBytes == nil {
		return &resource.Quantity{Format: resource.BinarySI}
	}
	return resource.NewQuantity(int64(*fs.UsedBytes), resource.BinarySI) //nolint:gosec // sizes fit
}

func inodeUsage(fs *statsv1alpha1.FsStats) *resource.Quantity {
	if fs == nil || fs.InodesUsed == nil {
		return &resource.Quantity{Format: resource.DecimalSI}
	}
	return resource.NewQuantity(int64(*fs.InodesUsed), resource.DecimalSI) //nolint:gosec // counts fit
}

// podDiskUsage is the kubelet's: the bytes and inodes of the parts measured — the containers'
// writable layers and logs, and the pod's local volumes (emptyDir, hostPath, ephemeral).
func podDiskUsage(s statsv1alpha1.PodStats, pod *corev1.Pod, parts []fsStatsType) corev1.ResourceList {
	bytes := resource.Quantity{Format: resource.BinarySI}
	inodes := resource.Quantity{Format: resource.DecimalSI}
	has := func(t fsStatsType) bool {
		for _, p := range parts {
			if p == t {
				return true
			}
		}
		return false
	}
	for _, c := range s.Containers {
		if has(fsStatsRoot) {
			bytes.Add(*diskUsage(c.Rootfs))
			inodes.Add(*inodeUsage(c.Rootfs))
		}
		if has(fsStatsLogs) {
			bytes.Add(*diskUsage(c.Logs))
			inodes.Add(*inodeUsage(c.Logs))
		}
	}
	if has(fsStatsLocalVolumeSource) {
		for _, v := range pod.Spec.Volumes {
			if !localVolume(v) {
				continue
			}
			for _, vs := range s.VolumeStats {
				if vs.Name == v.Name {
					bytes.Add(*diskUsage(&vs.FsStats))
					inodes.Add(*inodeUsage(&vs.FsStats))
					break
				}
			}
		}
	}
	return corev1.ResourceList{corev1.ResourceEphemeralStorage: bytes, resourceInodes: inodes}
}

// localVolume is the kubelet's localVolumeNames test: a host path, or a local ephemeral volume
// (a git repo, a config map, an emptyDir on the node's disk).
func localVolume(v corev1.Volume) bool {
	return v.HostPath != nil || v.GitRepo != nil || v.ConfigMap != nil ||
		(v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumDefault)
}

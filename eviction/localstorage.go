package eviction

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's local storage eviction (localStorageCapacityIsolation, on by default): a pod
// using more local storage than its own limits say is evicted at every housekeeping, node
// pressure or not, before the thresholds are looked at.

// The kubelet's messages for it (helpers.go).
const (
	emptyDirMessageFmt                  = "Usage of EmptyDir volume %q exceeds the limit %q. "
	podEphemeralStorageMessageFmt       = "Pod ephemeral local storage usage exceeds the total limit of containers %s. "
	containerEphemeralStorageMessageFmt = "Container %s exceeded its local ephemeral storage limit %q. "
)

// evictForLocalStorage evicts, with the immediate grace period, every active pod above one of
// its limits: an emptyDir's sizeLimit, the pod's ephemeral-storage limit (its containers'
// writable layers and logs and its local ephemeral volumes), a container's (its logs, and its
// writable layer unless the imagefs is a filesystem of its own). Critical pods excepted. The
// pods are measured only when one of them has such a limit.
func (m *Manager) evictForLocalStorage(ctx context.Context) []*corev1.Pod {
	if m.cfg.ActivePods == nil || m.cfg.EvictPod == nil || m.cfg.PodStats == nil {
		return nil
	}
	var limited []*corev1.Pod
	for _, pod := range m.cfg.ActivePods() {
		if hasLocalStorageLimit(pod) {
			limited = append(limited, pod)
		}
	}
	if len(limited) == 0 {
		return nil
	}
	dedicatedImageFs, ok := m.dedicatedImageFs(ctx)
	if !ok {
		return nil
	}
	logger := klog.FromContext(ctx)
	all, err := m.cfg.PodStats(ctx)
	if err != nil {
		logger.Error(err, "Eviction manager: failed to measure the pods")
		return nil
	}
	stats := statsByUID(all)
	var evicted []*corev1.Pod
	for _, pod := range limited {
		s, ok := stats(pod)
		if !ok {
			continue
		}
		message := localStorageExceeded(pod, s, dedicatedImageFs)
		if message == "" {
			continue
		}
		if m.evictPod(ctx, pod, immediateEvictionGracePeriod, message) {
			evicted = append(evicted, pod)
		}
	}
	return evicted
}

// localStorageExceeded is the kubelet's eviction message for the first limit of the pod its
// usage exceeds, in its order (emptyDir, pod, container); "" for none.
func localStorageExceeded(pod *corev1.Pod, s statsv1alpha1.PodStats, dedicatedImageFs bool) string {
	used := map[string]*resource.Quantity{}
	for _, v := range s.VolumeStats {
		used[v.Name] = diskUsage(&v.FsStats)
	}
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() != 1 {
			continue
		}
		if u := used[v.Name]; u != nil && u.Cmp(*v.EmptyDir.SizeLimit) > 0 {
			return fmt.Sprintf(emptyDirMessageFmt, v.Name, v.EmptyDir.SizeLimit.String())
		}
	}
	if limit, ok := podLimit(pod, corev1.ResourceEphemeralStorage); ok {
		total := podDiskUsage(s, pod, []fsStatsType{fsStatsRoot, fsStatsLogs})[corev1.ResourceEphemeralStorage]
		for _, v := range pod.Spec.Volumes {
			if localVolume(v) && v.HostPath == nil {
				if u := used[v.Name]; u != nil {
					total.Add(*u)
				}
			}
		}
		if total.Cmp(limit) > 0 {
			return fmt.Sprintf(podEphemeralStorageMessageFmt, limit.String())
		}
	}
	limits := map[string]*resource.Quantity{}
	for _, c := range pod.Spec.Containers {
		if l := c.Resources.Limits.StorageEphemeral(); l != nil && l.Value() != 0 {
			limits[c.Name] = l
		}
	}
	for _, c := range s.Containers {
		limit, ok := limits[c.Name]
		if !ok {
			continue
		}
		u := diskUsage(c.Logs)
		if !dedicatedImageFs {
			u.Add(*diskUsage(c.Rootfs))
		}
		if limit.Cmp(*u) < 0 {
			return fmt.Sprintf(containerEphemeralStorageMessageFmt, c.Name, limit.String())
		}
	}
	return ""
}

// hasLocalStorageLimit is whether the pod sets a limit evictForLocalStorage checks.
func hasLocalStorageLimit(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Sign() == 1 {
			return true
		}
	}
	_, ok := podLimit(pod, corev1.ResourceEphemeralStorage)
	return ok
}

package lifecycle

import (
	"context"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// setupVolumes makes the pod's volumes exist; until they do, its containers wait in
// ContainerCreating and a FailedMount event says why (the kubelet's behaviour), and it is
// tried again after retryAfter.
func (p *Provider) setupVolumes(ctx context.Context, uid types.UID) bool {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return false
	}
	pod, facts := st.pod, p.factsLocked(st)
	p.mu.Unlock()

	vols, warnings, err := p.volumes.Setup(ctx, pod, facts, p.cfg.Allocatable)
	for _, w := range warnings {
		p.cfg.Recorder.Event(pod, corev1.EventTypeWarning, "VolumeWarning", w)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", err)
		klog.FromContext(ctx).V(2).Info("Volumes not ready", "err", err)
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		return false
	}
	st.volumes, st.volumesReady, st.volumesRefreshed = vols, true, p.cfg.Clock.Now()
	p.wakeLocked(uid, st.volumesRefreshed.Add(p.cfg.VolumeRefresh))
	return true
}

// refreshVolumes brings the pod's config map, secret and downward API volumes up to date once
// per VolumeRefresh, as the kubelet does on its periodic pod sync.
func (p *Provider) refreshVolumes(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || !hasRefreshedVolumes(st.pod) {
		p.mu.Unlock()
		return
	}
	now := p.cfg.Clock.Now()
	due := st.volumesRefreshed.Add(p.cfg.VolumeRefresh)
	if now.Before(due) {
		p.wakeLocked(uid, due)
		p.mu.Unlock()
		return
	}
	pod, facts := st.pod, p.factsLocked(st)
	p.mu.Unlock()

	if _, err := p.volumes.Refresh(ctx, pod, facts, p.cfg.Allocatable); err != nil {
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedMount", "%v", err)
	}
	p.mu.Lock()
	if st.pod == pod { // else an update came meanwhile: refresh again (refreshVolumesSoonLocked)
		st.volumesRefreshed = now
	}
	p.wakeLocked(uid, now.Add(p.cfg.VolumeRefresh))
	p.mu.Unlock()
}

// hasRefreshedVolumes reports whether the pod has volumes whose content can change.
func hasRefreshedVolumes(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil || v.Secret != nil || v.DownwardAPI != nil || v.Projected != nil {
			return true
		}
	}
	return false
}

// refreshVolumesSoonLocked makes the next sync of the pod bring its volumes up to date at
// once, not a VolumeRefresh after the last time: UpdatePod calls it, as the kubelet's syncPod
// for an updated pod has its volume manager process the pod's volumes again (ReprocessPod, and
// a remount of downwardAPI, configMap, secret and projected volumes). So new labels and
// annotations reach downwardAPI files within a sync (the e2e "Downward API volume should
// update labels on modification" and "...annotations..."), not up to a minute later.
//
// refreshVolumes marks a refresh done only when it used the pod that is current when it ends:
// an update that lands while a refresh runs is not lost to it.
func refreshVolumesSoonLocked(st *podState) {
	st.volumesRefreshed = time.Time{}
}

// canMount reports whether this process may mount (tmpfs for memory-backed emptyDirs): root.
func canMount() bool { return os.Geteuid() == 0 }

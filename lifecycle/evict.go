package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/vk-static/vk-static/eviction"
	"github.com/vk-static/vk-static/lifecycle/admission"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/provider"
)

// Eviction of running pods, the kubelet's killPodFunc for its eviction manager (package
// eviction decides; this is how a pod is evicted). An evicted pod is stopped with the grace
// the eviction gave, its volumes are removed (the kubelet reclaims a terminated pod's volumes
// at once: that is what frees an emptyDir's disk), and it stays Failed with reason Evicted and
// the eviction's message, never started again — an agent restart included, the state being
// in the pod's record. The pod's containers and logs stay until the pod is deleted or a
// node-level reclaim removes them (reclaimContainers).

// reasonTerminationByKubelet is the reason of the DisruptionTarget condition of a pod the
// kubelet evicted.
const reasonTerminationByKubelet = "TerminationByKubelet"

// evictCleanupTimeout is how long evictPod waits beyond the grace period for the pod to be
// stopped and its volumes removed, the kubelet's podCleanupTimeout: the eviction manager,
// waiting, measures nothing, and must not wait on a stop that hangs.
const evictCleanupTimeout = 30 * time.Second

// evictPod evicts pod: a Warning event Evicted with message, then its containers stopped with
// grace. It returns once they have stopped and its volumes are removed, ctx ends, or
// evictCleanupTimeout after the grace period.
func (p *Provider) evictPod(ctx context.Context, pod *corev1.Pod, grace time.Duration, message string) error {
	return p.stopForNode(ctx, pod, grace, ReasonEvicted, message)
}

// stopForNode stops pod for the node's sake, as evictPod does, with reason (Evicted, or
// Preempting for a pod a critical pod preempts) for its event and status.
func (p *Provider) stopForNode(ctx context.Context, pod *corev1.Pod, grace time.Duration, reason, message string) error {
	p.mu.Lock()
	st, ok := p.pods[pod.UID]
	if !ok {
		p.mu.Unlock()
		return provider.NotFound("lifecycle: pod %s (UID %s)", klog.KObj(pod), pod.UID)
	}
	if st.evicted == "" && !st.deleting {
		st.evicted, st.evictedReason, st.evictGrace = message, reason, grace
		st.evictedDone = make(chan struct{})
		if err := p.savePod(st); err != nil {
			klog.FromContext(ctx).Error(err, "Recording the pod's eviction", "pod", klog.KObj(pod))
		}
		p.cfg.Recorder.Event(st.pod, corev1.EventTypeWarning, reason, message)
		p.kickLocked(pod.UID)
	}
	done := st.evictedDone
	p.mu.Unlock()
	if done == nil {
		return nil // being deleted, or evicted by an earlier agent
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.cfg.Clock.After(grace + evictCleanupTimeout):
		return fmt.Errorf("lifecycle: pod %s not stopped and cleaned up %s after its eviction", klog.KObj(pod), grace+evictCleanupTimeout)
	}
}

// releaseEvicted removes a stopped evicted pod's volumes and tells evictPod it is done; a
// volume that cannot be removed yet is tried again.
func (p *Provider) releaseEvicted(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || !st.stopped {
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if err := p.volumes.Teardown(ctx, uid); err != nil {
		klog.FromContext(ctx).Error(err, "Removing an evicted pod's volumes")
		p.mu.Lock()
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	st.volumesReady, st.volumes = false, nil
	if st.evictedDone != nil {
		close(st.evictedDone)
		st.evictedDone = nil
	}
	p.mu.Unlock()
}

// evictionReason is the status reason of an evicted or preempted pod.
func (st *podState) evictionReason() string {
	if st.evictedReason == "" {
		return ReasonEvicted // the record of an agent that kept no reason
	}
	return st.evictedReason
}

// evictedCondition is the kubelet's DisruptionTarget condition of an evicted or preempted pod;
// its transition time is the first report's.
func evictedCondition(st *podState, now metav1.Time) corev1.PodCondition {
	message := st.evicted
	if st.evictionReason() == admission.ReasonPreempting {
		message = admission.MessagePreemptedCondition
	}
	c := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: reasonTerminationByKubelet, Message: message, LastTransitionTime: now}
	if st.status != nil {
		if prev, ok := podstatus.Find(st.status.Conditions, corev1.DisruptionTarget); ok {
			c.LastTransitionTime = prev.LastTransitionTime
		}
	}
	return c
}

// activePods are the pods eviction may choose from, the kubelet's active pods: neither
// terminating nor terminated.
func (p *Provider) activePods() []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*corev1.Pod
	for _, st := range p.pods {
		if st.workState() != podSyncing || podstatus.IsTerminal(st.status) {
			continue
		}
		out = append(out, st.pod) // replaced, never changed in place: safe to read
	}
	return out
}

// evictionStats measures the active pods for eviction's ranking, as the kubelet's summary
// does: each running container's working set, writable layer and processes (from the
// runtime: the process runtime counts its cgroups' processes, CRI has no count), each
// container's logs, and the pod's local volumes (emptyDir on disk, config map, secret,
// downward API and projected files; not host paths, which the kubelet does not measure).
func (p *Provider) evictionStats(ctx context.Context) ([]statsv1alpha1.PodStats, error) {
	type instance struct{ name, id string }
	type podMeasure struct {
		ref        statsv1alpha1.PodReference
		logDir     string
		containers []instance
		volumes    map[string]string
	}
	p.mu.Lock()
	var pods []podMeasure
	for uid, st := range p.pods {
		if st.deleting || st.evicted != "" || st.stopped {
			continue
		}
		m := podMeasure{ref: statsv1alpha1.PodReference{Name: st.pod.Name, Namespace: st.pod.Namespace, UID: string(uid)},
			logDir: p.podLogDir(st.pod), volumes: map[string]string{}}
		for name, rec := range st.containers {
			id := ""
			if rec.running() {
				id = rec.current.ID
			}
			m.containers = append(m.containers, instance{name, id})
		}
		for _, v := range st.pod.Spec.Volumes {
			if path, ok := st.volumes[v.Name]; ok && v.HostPath == nil && !(v.EmptyDir != nil && v.EmptyDir.Medium != corev1.StorageMediumDefault) {
				m.volumes[v.Name] = path
			}
		}
		pods = append(pods, m)
	}
	p.mu.Unlock()

	out := make([]statsv1alpha1.PodStats, 0, len(pods))
	for _, m := range pods {
		ps := statsv1alpha1.PodStats{PodRef: m.ref}
		var workingSet, processes uint64
		for _, c := range m.containers {
			cs := statsv1alpha1.ContainerStats{Name: c.name, Rootfs: &statsv1alpha1.FsStats{UsedBytes: new(uint64), InodesUsed: new(uint64)}}
			if c.id != "" {
				if s, err := p.rt.ContainerStats(ctx, c.id); err == nil {
					ws := s.MemoryWorkingSetBytes
					cs.Memory = &statsv1alpha1.MemoryStats{WorkingSetBytes: &ws}
					workingSet += ws
					processes += s.Processes
					bytes, inodes := s.WritableLayerBytes, s.WritableLayerInodes
					cs.Rootfs = &statsv1alpha1.FsStats{UsedBytes: &bytes, InodesUsed: &inodes}
				}
			}
			bytes, inodes := dirUsage(filepath.Join(m.logDir, c.name))
			cs.Logs = &statsv1alpha1.FsStats{UsedBytes: &bytes, InodesUsed: &inodes}
			ps.Containers = append(ps.Containers, cs)
		}
		ps.Memory = &statsv1alpha1.MemoryStats{WorkingSetBytes: &workingSet}
		ps.ProcessStats = &statsv1alpha1.ProcessStats{ProcessCount: &processes}
		for name, path := range m.volumes {
			bytes, inodes := dirUsage(path)
			ps.VolumeStats = append(ps.VolumeStats, statsv1alpha1.VolumeStats{Name: name,
				FsStats: statsv1alpha1.FsStats{UsedBytes: &bytes, InodesUsed: &inodes}})
		}
		out = append(out, ps)
	}
	return out, nil
}

// dirUsage is what the files below dir take on disk (allocated blocks, as du counts) and how
// many inodes, staying on dir's file system and following no symlink; what cannot be read
// counts for nothing.
func dirUsage(dir string) (bytes, inodes uint64) {
	root, err := os.Lstat(dir)
	if err != nil {
		return 0, 0
	}
	rootStat, ok := root.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // unreadable: counts for nothing
		}
		info, err := d.Info()
		if err != nil {
			return nil //nolint:nilerr // gone meanwhile
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		if st.Dev != rootStat.Dev {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		bytes += uint64(st.Blocks) * 512 //nolint:gosec // block counts are positive
		inodes++
		return nil
	})
	return bytes, inodes
}

// reclaimContainers is the kubelet's DeleteAllUnusedContainers under disk pressure: every
// container of a pod that has terminated (Succeeded, Failed, evicted) is removed from the
// runtime with its log files. The pod's status keeps what they were.
func (p *Provider) reclaimContainers(ctx context.Context) error {
	type dead struct {
		logDir    string // the pod's
		name      string
		instances []*ContainerStatus
	}
	p.mu.Lock()
	var all []dead
	for _, st := range p.pods {
		terminated := st.stopped || podstatus.IsTerminal(st.status)
		if !terminated || st.deleting {
			continue
		}
		for name, rec := range st.containers {
			d := dead{logDir: p.podLogDir(st.pod), name: name}
			for _, inst := range []*ContainerStatus{rec.current, rec.previous} {
				if inst != nil && inst.State == ContainerExited {
					d.instances = append(d.instances, inst)
				}
			}
			if len(d.instances) > 0 && !rec.running() {
				all = append(all, d)
			}
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, d := range all {
		removed := true
		for _, inst := range d.instances {
			if err := p.removeContainer(ctx, inst); err != nil {
				errs = append(errs, err)
				removed = false
			}
		}
		if removed {
			if err := os.RemoveAll(filepath.Join(d.logDir, d.name)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(all) > 0 {
		klog.FromContext(ctx).Info("Removed the containers of terminated pods", "containers", len(all))
	}
	return errors.Join(errs...)
}

// evictionManager is the provider's eviction manager; nil without Config.Eviction.
func (p *Provider) evictionManager() *eviction.Manager { return p.eviction }

// newEvictionManager builds the eviction manager of cfg.Eviction, measuring the host with
// cfg.RootDir as the nodefs and the runtime's image filesystem, if it has one, as the imagefs, and
// evicting p's pods ([Provider.evictPod]) after reclaiming dead containers and, with a runtime that
// has images, unused images.
func newEvictionManager(cfg Config, p *Provider) *eviction.Manager {
	if cfg.Eviction == nil {
		return nil
	}
	ec := *cfg.Eviction
	host := &eviction.Host{RootDir: cfg.RootDir}
	if fs, ok := cfg.Runtime.(ImageFsDir); ok {
		host.ImageFs = fs.ImageFsDir
	}
	if ec.Measure == nil {
		ec.Measure = host.Measure
	}
	if ec.DedicatedImageFs == nil {
		ec.DedicatedImageFs = host.DedicatedImageFs
	}
	if ec.Clock == nil {
		ec.Clock = cfg.Clock
	}
	ec.ActivePods, ec.PodStats, ec.EvictPod = p.activePods, p.evictionStats, p.evictPod
	ec.ReclaimContainers = p.reclaimContainers
	if cfg.NodeName != "" {
		// The kubelet's node reference for events: the name as UID too.
		ec.Recorder = cfg.Recorder
		ec.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: cfg.NodeName, UID: types.UID(cfg.NodeName)}
	}
	if gc, ok := cfg.Runtime.(ImageReclaimer); ok {
		ec.ReclaimImages = gc.DeleteUnusedImages
	}
	return eviction.NewManager(ec)
}

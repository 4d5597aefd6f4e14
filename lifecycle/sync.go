// One sync of a pod, in the order [Provider.syncPod] meets it: the [podWorker] that runs it
// (kicks and wakes); syncPod itself; what it reads first (the runtime's word on the pod's
// containers, the active deadline); and its way out for a pod not syncing
// ([Provider.syncTerminating]). The pass itself is the kubelet's SyncPod: the pod's volumes
// ([Provider.setupVolumes]), its sandbox ([Provider.runSandbox]) and the [plan] of which
// containers to kill and start.

package lifecycle

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/vk-static/vk-static/internal/queue"
	"github.com/vk-static/vk-static/provider"
)

// podWorker syncs one pod, one sync at a time, whenever something about it changed (a call, a
// container event, a probe result) or a timer it set fires (a back-off ending, the active
// deadline, the volume refresh). Kicks while a sync runs coalesce into one more sync; nothing
// polls. It is the kubelet's pod worker: a pod's slow stop (its grace period) holds up no other.
type podWorker struct {
	kicks   *queue.Queue[struct{}, struct{}] // a wake-up signal: one key
	timer   clock.Timer                      // the next wake, nil for none
	due     time.Time
	running bool // its goroutine has started
}

// startWorkerLocked gives uid a worker, started once Run has, and kicks it.
func (p *Provider) startWorkerLocked(uid types.UID) {
	w, ok := p.workers[uid]
	if !ok {
		w = &podWorker{kicks: queue.New[struct{}, struct{}](nil)}
		p.workers[uid] = w
	}
	if !w.running && p.runCtx != nil {
		w.running = true
		ctx := p.runCtx
		p.wg.Go(func() { p.runWorker(ctx, uid, w) })
	}
	w.poke()
}

func (w *podWorker) poke() { w.kicks.Add(struct{}{}, struct{}{}) }

// kickLocked makes uid's worker sync again soon.
func (p *Provider) kickLocked(uid types.UID) {
	if w, ok := p.workers[uid]; ok {
		w.poke()
	}
}

func (p *Provider) kick(uid types.UID) {
	p.mu.Lock()
	p.kickLocked(uid)
	p.mu.Unlock()
}

// wakeLocked makes uid's worker sync at at (or earlier, if already due earlier).
func (p *Provider) wakeLocked(uid types.UID, at time.Time) {
	w, ok := p.workers[uid]
	if !ok || at.IsZero() {
		return
	}
	if w.timer != nil && !w.due.IsZero() && !at.Before(w.due) && w.due.After(p.cfg.Clock.Now()) {
		return // an earlier wake is set
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.due = at
	w.timer = p.cfg.Clock.AfterFunc(max(at.Sub(p.cfg.Clock.Now()), 0), w.poke)
}

// runWorker syncs uid until the pod is forgotten or ctx ends.
func (p *Provider) runWorker(ctx context.Context, uid types.UID, w *podWorker) {
	defer func() {
		p.mu.Lock()
		if w.timer != nil {
			w.timer.Stop()
		}
		p.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kicks.Ready():
		}
		w.kicks.Take() // before the sync: a kick during it is one more sync
		if forgotten := p.syncPod(ctx, uid); forgotten {
			return
		}
	}
}

// retryAfter is when a step that failed for a reason outside the pod (a volume whose config
// map is missing, a sandbox the runtime could not create) is tried again.
const retryAfter = 10 * time.Second

// syncPod brings one pod a step closer to what it should be and reports its status, as its work
// state says ([podState.workState]): in podSyncing its volumes and sandbox are set up and the
// [plan]'s containers started; any other state is syncTerminating's. It returns true once the pod
// has been stopped for good and forgotten; a deleted pod that could not be cleaned up yet stays,
// and its worker tries again when the back-off wakes it.
func (p *Provider) syncPod(ctx context.Context, uid types.UID) (forgotten bool) {
	_ = p.removeLeftovers(ctx, uid) // logged, and tried again
	p.refreshContainers(ctx, uid)

	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return true
	}
	now := p.cfg.Clock.Now()
	logger := klog.FromContext(ctx).WithValues("pod", klog.KObj(st.pod), "podUID", uid)
	ctx = klog.NewContext(ctx, logger)
	if !st.deleting && st.refused == "" {
		p.checkActiveDeadlineLocked(uid, st, now)
	}
	if st.workState() != podSyncing {
		return p.syncTerminating(ctx, uid, st)
	}
	p.allocateResizeLocked(ctx, uid, st) // a resize is decided before anything is created
	needVolumes, needSandbox := !st.volumesReady, st.sandboxID == ""
	p.mu.Unlock()

	if needVolumes && !p.setupVolumes(ctx, uid) {
		p.publish(uid)
		return false
	}
	if needSandbox && !p.runSandbox(ctx, uid) {
		p.publish(uid)
		return false
	}
	if !needVolumes {
		p.refreshVolumes(ctx, uid)
	}

	p.actuateResize(ctx, uid)

	p.mu.Lock()
	pl := planPod(st, now)
	if pl.initFailed && len(pl.kill) == 0 {
		logger.V(2).Info("An init container failed and the pod does not restart: the pod failed")
	}
	pod := st.pod
	p.mu.Unlock()
	for _, name := range pl.backingOff {
		// The kubelet's event on every sync that finds the container in back-off (the
		// recorder aggregates repeats), which kubectl describe shows.
		p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)",
			name, pod.Name, pod.Namespace, pod.UID)
	}
	for _, k := range pl.kill {
		p.killContainer(ctx, uid, k.name, k.reason)
	}
	for _, c := range pl.start {
		if p.isDeleting(uid) {
			break // the next sync stops the pod
		}
		p.startContainer(ctx, uid, c)
		p.publish(uid)
	}

	p.mu.Lock()
	p.wakeLocked(uid, pl.wakeAt)
	p.publishLocked(st)
	p.mu.Unlock()
	return false
}

// Before the pass: the runtime's word on the pod's containers, the active deadline, and the way
// out for a pod that is not syncing.

// refreshContainers asks the runtime about every instance of the pod that had not exited when
// last seen and is not watched (containerRecord): the container events only say that
// something changed.
func (p *Provider) refreshContainers(ctx context.Context, uid types.UID) {
	p.mu.Lock()
	st, ok := p.pods[uid]
	var pod *corev1.Pod
	ids := map[string]string{} // instance ID → container name
	if ok {
		pod = st.pod
		for name, rec := range st.containers {
			if rec.current != nil && rec.current.State != ContainerExited && !rec.watched {
				ids[rec.current.ID] = name
			}
		}
	}
	p.mu.Unlock()
	for id, name := range ids {
		cs, err := p.rt.ContainerStatus(ctx, id)
		if provider.IsNotFound(err) {
			// The runtime lost it (its state removed by hand): it is gone, and the restart
			// policy decides what follows.
			cs = &ContainerStatus{ID: id, State: ContainerExited, ExitCode: 137, Reason: "ContainerMissing",
				Message: "the runtime no longer knows this container", FinishedAt: p.cfg.Clock.Now()}
		} else if err != nil {
			klog.FromContext(ctx).Error(err, "Reading a container's status", "containerID", id)
			continue
		} else {
			p.addTerminationMessage(ctx, pod, name, cs)
		}
		p.mu.Lock()
		p.observeLocked(uid, cs)
		p.mu.Unlock()
	}
}

// observeLocked takes a container's new status from the runtime.
func (p *Provider) observeLocked(uid types.UID, cs *ContainerStatus) {
	st, ok := p.pods[uid]
	if !ok {
		return
	}
	for name, rec := range st.containers {
		if rec.current == nil || rec.current.ID != cs.ID {
			continue
		}
		keep := *cs
		if keep.Labels == nil {
			keep.Labels = rec.current.Labels
		}
		if keep.LogPath == "" {
			keep.LogPath = rec.current.LogPath
		}
		rec.current = &keep
		rec.watched = rec.startSeen && cs.State == ContainerRunning
		if cs.State == ContainerRunning && rec.started {
			rec.everStarted = true
		}
		if cs.State == ContainerExited {
			rec.closeExited()
			p.probes.RemoveInstance(uid, name, cs.ID)
		}
		return
	}
}

// onContainerEvent is the runtime's report that a container changed: its pod's worker looks.
// A Started event makes an instance seen running watched (containerRecord); an Exited event
// ends the watch.
func (p *Provider) onContainerEvent(ev ContainerEvent) {
	uid := types.UID(ev.Labels[LabelPodUID])
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		for _, rec := range st.containers {
			if rec.current != nil && rec.current.ID == ev.ContainerID {
				rec.startSeen = ev.Type == ContainerStartedEvent
				rec.watched = rec.startSeen && rec.current.State == ContainerRunning
			}
		}
	}
	p.mu.Unlock()
	p.kick(uid)
}

func (r *containerRecord) closeExited() {
	if r.exited == nil {
		return
	}
	select {
	case <-r.exited:
	default:
		close(r.exited)
	}
}

// checkActiveDeadlineLocked moves a pod past its activeDeadlineSeconds to podTerminating, and
// wakes its worker when the deadline comes.
func (p *Provider) checkActiveDeadlineLocked(uid types.UID, st *podState, now time.Time) {
	deadline, ok := activeDeadline(st)
	if !ok {
		return
	}
	if !now.Before(deadline) && !st.deadlineExceeded {
		st.deadlineExceeded = true
		p.cfg.Recorder.Event(st.pod, corev1.EventTypeNormal, reasonDeadlineExceeded, messageDeadlineExceeded)
	}
	p.wakeLocked(uid, deadline)
}

// activeDeadline is when the pod's activeDeadlineSeconds runs out, counted from its start.
func activeDeadline(st *podState) (time.Time, bool) {
	ads := st.pod.Spec.ActiveDeadlineSeconds
	if ads == nil || st.startTime.IsZero() {
		return time.Time{}, false
	}
	return st.startTime.Add(time.Duration(*ads) * time.Second), true
}

// syncTerminating is a sync of a pod not in podSyncing, called with p.mu held, which it
// releases: a terminating pod is stopped (the kubelet's SyncTerminatingPod); then a deleted
// pod is cleaned up and forgotten, an evicted one's volumes are released, and the terminal
// status is reported (SyncTerminatedPod). A refused pod, which never ran, is only reported
// until it is deleted. It returns whether the pod was forgotten.
func (p *Provider) syncTerminating(ctx context.Context, uid types.UID, st *podState) (forgotten bool) {
	if st.refused != "" && !st.deleting {
		p.publishLocked(st)
		p.mu.Unlock()
		return false
	}
	stopped, deleting, evicted := st.stopped, st.deleting, st.evicted != ""
	p.mu.Unlock()
	if !stopped {
		p.stopPod(ctx, uid)
	}
	if deleting {
		return p.forget(ctx, uid)
	}
	if evicted {
		p.releaseEvicted(ctx, uid)
	}
	p.publish(uid)
	return false
}

// isDeleting reports whether the pod is gone or being deleted: syncPod starts nothing more then.
func (p *Provider) isDeleting(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.pods[uid]
	return !ok || st.deleting
}

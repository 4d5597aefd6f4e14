package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/backoff"
	"github.com/vk-static/vk-static/internal/mounts"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// cleanupRetry is how soon a stopped pod whose cleanup failed is tried again: a runtime that
// refused a removal or a mount that would not go may take a while to clear, and the retries
// must not hammer it.
var cleanupRetry = backoff.Policy{Initial: time.Second, Max: 5 * time.Minute}

// reasonCleanupFailed is the Warning event of a stopped pod that could not be cleaned up.
const reasonCleanupFailed = "FailedCleanup"

// forget removes everything the pod left (its containers, sandbox, volumes, logs and state)
// once it has stopped, and then the pod itself: GetPod no longer finds it. It returns false
// while anything could not be removed: the pod is then kept — terminating, its record and
// directory in place — reported (event, log, vk_static_pod_cleanup_failures_total) and tried
// again with back-off (cleanupRetry), until the runtime confirms every removal (NotFound counts
// as removed) and nothing is mounted below the pod's directory. Each step waits for the one
// before: volumes outlive the containers that use them, and the directory, which holds the
// record a restarted agent needs, goes last.
func (p *Provider) forget(ctx context.Context, uid types.UID) bool {
	if ctx.Err() != nil {
		return false // the agent is stopping; the next agent finishes the job
	}
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return true
	}
	if !st.stopped {
		p.mu.Unlock()
		return false
	}
	var instances []*ContainerStatus
	for _, rec := range st.containers {
		for _, inst := range []*ContainerStatus{rec.current, rec.previous} {
			if inst != nil {
				instances = append(instances, inst)
			}
		}
	}
	sandboxID, logDir := st.sandboxID, p.podLogDir(st.pod)
	p.mu.Unlock()

	if err := p.removeLeftovers(ctx, uid); err != nil {
		p.cleanupFailed(ctx, uid, cleanupStepContainer, err)
		return false
	}
	if step, err := p.removePodLeftovers(ctx, uid, instances, sandboxID, logDir); err != nil {
		if ctx.Err() != nil {
			return false
		}
		p.cleanupFailed(ctx, uid, step, err)
		return false
	}
	p.mu.Lock()
	if st.cleanup != nil {
		klog.FromContext(ctx).Info("Cleaned up the pod at last")
	}
	p.forgetLocked(uid)
	p.mu.Unlock()
	p.stats.forget(uid)
	return true
}

// removePodLeftovers removes the pod's containers, then its sandbox, then its volumes, then its
// log directory and its directory, and stops at the first step that fails, which it names.
func (p *Provider) removePodLeftovers(ctx context.Context, uid types.UID, instances []*ContainerStatus, sandboxID, logDir string) (step string, err error) {
	var errs []error
	for _, inst := range instances {
		if err := p.removeContainer(ctx, inst); err != nil {
			errs = append(errs, fmt.Errorf("removing container %s: %w", inst.ID, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cleanupStepContainer, err
	}
	if sandboxID != "" {
		if err := p.rt.StopSandbox(ctx, sandboxID); err != nil && !provider.IsNotFound(err) {
			return cleanupStepSandbox, fmt.Errorf("stopping sandbox %s: %w", sandboxID, err)
		}
		if err := p.rt.RemoveSandbox(ctx, sandboxID); err != nil && !provider.IsNotFound(err) {
			return cleanupStepSandbox, fmt.Errorf("removing sandbox %s: %w", sandboxID, err)
		}
	}
	// Teardown unmounts what it mounted and refuses to go through a mount it could not undo
	// (EBUSY) or did not make.
	if err := p.volumes.Teardown(ctx, uid); err != nil {
		return cleanupStepVolumes, err
	}
	// Anything still mounted below the directories (by the runtime, a Bidirectional mount, an
	// operator) holds someone else's files: os.RemoveAll would delete through it.
	if err := mounts.RemoveAll(logDir); err != nil {
		return cleanupStepDirectory, err
	}
	if err := mounts.RemoveAll(filepath.Join(p.cfg.podsDir(), string(uid))); err != nil {
		return cleanupStepDirectory, err
	}
	return "", nil
}

// cleanupFailed reports a cleanup step that failed and makes the pod's worker try again after
// the next back-off delay.
func (p *Provider) cleanupFailed(ctx context.Context, uid types.UID, step string, err error) {
	p.metrics.cleanupFailed(step)
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok {
		p.mu.Unlock()
		return
	}
	if st.cleanup == nil {
		st.cleanup = cleanupRetry.Start()
	}
	delay := st.cleanup.Next()
	p.wakeLocked(uid, p.cfg.Clock.Now().Add(delay))
	pod := st.pod
	p.mu.Unlock()
	klog.FromContext(ctx).Error(err, "The stopped pod could not be cleaned up: it is kept, and tried again", "step", step, "retryIn", delay)
	p.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, reasonCleanupFailed,
		"The pod's %s could not be removed, retrying in %s: %v", step, delay, err)
}

// forgetLocked drops every trace of the pod in memory.
func (p *Provider) forgetLocked(uid types.UID) {
	st, ok := p.pods[uid]
	if !ok {
		return
	}
	delete(p.pods, uid)
	if key := podutil.FullName(st.pod); p.byName[key] == uid {
		delete(p.byName, key)
	}
	delete(p.workers, uid)
	delete(p.podFiles, uid)
	p.retryDeferredResizesLocked(uid) // what it held may let a deferred resize fit
	for name, rec := range st.containers {
		rec.closeExited()
		p.restarts.Reset(containerKey{uid: uid, name: name})
	}
	for image := range st.imagePulls {
		p.imagePulls.Reset(imageKey{uid: uid, image: image})
	}
}

// leftovers are what the runtime holds of a pod that the pod no longer tracks: an old
// container instance whose removal failed (startContainer keeps one dead instance per
// container), the kept containers and sandboxes of an unreadable record that the pod, created
// again, could not use ([keptPod]). The pod's syncs remove them, trying again after retryAfter
// until the runtime confirms each removal (NotFound counts), and the pod is not forgotten
// before (forget): a failed removal is never the last word on a container.
type leftovers struct {
	sandboxes  []string
	containers []*ContainerStatus
}

func (l *leftovers) empty() bool { return len(l.sandboxes) == 0 && len(l.containers) == 0 }

// addLeftoverLocked gives the pod an instance to remove on its next syncs, the first after
// retryAfter.
func (p *Provider) addLeftoverLocked(uid types.UID, cs *ContainerStatus) {
	st, ok := p.pods[uid]
	if !ok {
		return
	}
	st.leftovers.containers = append(st.leftovers.containers, cs)
	p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
}

// removeLeftovers removes the pod's leftovers. What could not be removed stays for a sync after
// retryAfter, and the error says what.
func (p *Provider) removeLeftovers(ctx context.Context, uid types.UID) error {
	p.mu.Lock()
	st, ok := p.pods[uid]
	if !ok || st.leftovers.empty() {
		p.mu.Unlock()
		return nil
	}
	left := st.leftovers
	st.leftovers = leftovers{}
	p.mu.Unlock()

	var failed leftovers
	var errs []error
	for _, cs := range left.containers {
		if err := p.removeInstance(ctx, cs); err != nil {
			failed.containers = append(failed.containers, cs)
			errs = append(errs, err)
		}
	}
	for _, id := range left.sandboxes {
		if err := p.dropSandbox(ctx, id); err != nil {
			failed.sandboxes = append(failed.sandboxes, id)
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	klog.FromContext(ctx).Error(err, "Removing what the runtime holds of the pod that the pod no longer tracks; tried again", "retryIn", retryAfter)
	p.mu.Lock()
	if st, ok := p.pods[uid]; ok {
		st.leftovers.containers = append(st.leftovers.containers, failed.containers...)
		st.leftovers.sandboxes = append(st.leftovers.sandboxes, failed.sandboxes...)
		p.wakeLocked(uid, p.cfg.Clock.Now().Add(retryAfter))
	}
	p.mu.Unlock()
	return err
}

// removeInstance stops a container instance if it runs and removes it; NotFound counts as
// removed.
func (p *Provider) removeInstance(ctx context.Context, cs *ContainerStatus) error {
	if cs.State == ContainerRunning {
		if err := p.rt.StopContainer(ctx, cs.ID, minimumGrace); err != nil && !provider.IsNotFound(err) {
			return fmt.Errorf("stopping container %s: %w", cs.ID, err)
		}
	}
	if err := p.removeContainer(ctx, cs); err != nil {
		return fmt.Errorf("removing container %s: %w", cs.ID, err)
	}
	return nil
}

// dropSandbox stops and removes a sandbox; NotFound counts as removed.
func (p *Provider) dropSandbox(ctx context.Context, id string) error {
	if err := p.rt.StopSandbox(ctx, id); err != nil && !provider.IsNotFound(err) {
		return fmt.Errorf("stopping sandbox %s: %w", id, err)
	}
	if err := p.rt.RemoveSandbox(ctx, id); err != nil && !provider.IsNotFound(err) {
		return fmt.Errorf("removing sandbox %s: %w", id, err)
	}
	return nil
}

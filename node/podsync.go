package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// syncPod reconciles one full name, moving its provider pod through the states of
// podWorkState (podstate.go): a terminated pod is finished with and forgotten
// (finishTerminated); a pod no longer wanted is stopped (terminate: podSyncing →
// podTerminating → podTerminated); the wanted pod is created or updated (podSyncing). It then
// finishes the API deletion of a pod the provider no longer runs and reconciles the mirror.
// Each step that must wait (for termination, for a source to be seen) returns and relies on
// the next event or a timed requeue; the periodic resync decides every key again in any case.
func (c *PodController) syncPod(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx).WithValues("podFullName", key)
	ctx = klog.NewContext(ctx, logger)
	desired, _ := c.cfg.Pods.GetPodByFullName(key)
	running, hasRunning := c.states.get(key)

	if hasRunning && running.state == podTerminated {
		if err := c.finishTerminated(ctx, key, running, desired); err != nil {
			return err
		}
		hasRunning = false
	}

	if hasRunning && !wanted(running, desired) {
		if source := sourceOf(running.ref()); desired == nil && !c.sourceSeen(source) {
			logger.V(4).Info("Not stopping pod before its source is seen", "source", source)
			return nil
		}
		if desired == nil && c.manifestUnreadable(running.ref()) {
			// Bad input never takes a running pod down: the file still exists, it just does not
			// decode now (the problem is reported by the source).
			logger.V(4).Info("Keeping pod whose manifest does not decode", "file", running.meta.Annotations[podutil.ConfigFileAnnotationKey])
			return nil
		}
		if err := c.terminate(ctx, key, running, desired); err != nil {
			return err
		}
		return c.syncMirror(ctx, key, desired, false)
	}

	if desired == nil || desired.DeletionTimestamp == nil {
		c.forgetDeleted(key)
	}
	switch {
	case desired == nil:
	case desired.DeletionTimestamp != nil:
		// Being deleted and not (or no longer) running in the provider.
		if err := c.deleteAPIPod(ctx, key, desired); err != nil {
			return err
		}
	case !hasRunning:
		if podstatus.Finished(&desired.Status) && !podutil.IsStaticPod(desired) {
			break // an API pod that already finished (e.g. before an agent restart) is not rerun
		}
		if err := c.create(ctx, key, desired); err != nil {
			return err
		}
	case !podutil.IsStaticPod(desired) && running.given != digestSpec(desired):
		// Compared with what the provider was given — never with API defaults the provider
		// does not know about — so that no spurious UpdatePod is made.
		if err := c.update(ctx, key, desired); err != nil {
			return err
		}
	}
	return c.syncMirror(ctx, key, desired, !hasRunning)
}

// finishTerminated forgets a terminated pod, which frees its full name (the kubelet's
// SyncTerminatedPod). An API pod being deleted gets its terminal status before its DELETE, as
// from the kubelet's status manager: written here, while the state still holds it, and from
// this worker, so that the DELETE that follows in syncPod comes at once instead of waiting for
// the status queue (and the status is never lost to the state being forgotten first). A
// status the API server refuses (Invalid, Forbidden) never holds the DELETE back; any other
// failure is retried before it.
func (c *PodController) finishTerminated(ctx context.Context, key string, running providerPod, desired *corev1.Pod) error {
	if !c.static && desired != nil && desired.DeletionTimestamp != nil && desired.UID == running.uid() {
		switch err := c.writer.write(ctx, key); {
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
			klog.FromContext(ctx).Error(err, "Terminal status refused; deleting the pod without it")
		case err != nil:
			return err
		}
	}
	c.states.forget(key, running.uid())
	return nil
}

// wanted: the provider's pod is the desired one and is not being deleted.
func wanted(running providerPod, desired *corev1.Pod) bool {
	return desired != nil && desired.UID == running.uid() && desired.DeletionTimestamp == nil
}

func sourceOf(pod *corev1.Pod) string {
	if s := podutil.Source(pod); s != "" {
		return s
	}
	return podutil.APIServerSource
}

func (c *PodController) create(ctx context.Context, key string, pod *corev1.Pod) error {
	// Tracked before the call: a provider may notify the first status before CreatePod returns.
	c.states.set(key, trackPod(pod))
	err := c.cfg.Metrics.timeProvider("CreatePod", func() error { return c.cfg.Provider.CreatePod(ctx, pod.DeepCopy()) })
	if err != nil {
		c.states.forget(key, pod.UID)
	}
	if provider.IsInvalidInput(err) {
		// Retrying at once will not help; the periodic resync tries again (the provider's
		// circumstances may change), and the refusal is reported once per distinct answer.
		if c.refusals.first(key, "create", err) {
			c.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedCreate", "Provider refused pod %s: %v", key, err)
			klog.FromContext(ctx).Error(err, "Provider refused the pod; trying again on the next resync")
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("create pod in provider: %w", err)
	}
	c.refusals.clear(key, "create")
	klog.FromContext(ctx).V(2).Info("Created pod in provider", "uid", pod.UID)
	return nil
}

func (c *PodController) update(ctx context.Context, key string, pod *corev1.Pod) error {
	err := c.cfg.Metrics.timeProvider("UpdatePod", func() error { return c.cfg.Provider.UpdatePod(ctx, pod.DeepCopy()) })
	if err != nil && !provider.IsInvalidInput(err) {
		return fmt.Errorf("update pod in provider: %w", err)
	}
	if err != nil {
		c.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "FailedUpdate", "Provider refused the update of %s: %v", key, err)
	}
	// Record the spec either way: an update the provider refuses is not retried until the pod changes again.
	c.states.updated(key, trackPod(pod))
	return nil
}

// terminate stops the running pod (the kubelet's SyncTerminatingPod): in podSyncing it asks
// the provider to delete it (once) and moves it to podTerminating; in podTerminating it waits
// for the provider to report it finished (observe), or for the grace period (plus slack) to
// run out, and moves it to podTerminated.
func (c *PodController) terminate(ctx context.Context, key string, running providerPod, desired *corev1.Pod) error {
	now := c.cfg.Clock.Now()
	if running.state == podTerminating {
		if now.Before(running.deadline) {
			c.sync.AddAfter(key, running.deadline.Sub(now))
			return nil
		}
		klog.FromContext(ctx).Info("Grace period over before the provider reported termination; treating the pod as terminated", "uid", running.uid())
		c.states.markTerminated(key, running.uid())
		c.sync.Add(key)
		return nil
	}
	grace := gracePeriod(running.ref(), desired)
	pod, err := c.podToDelete(ctx, running, desired)
	switch {
	case provider.IsNotFound(err):
		c.states.markTerminated(key, running.uid())
		c.sync.Add(key)
		return nil
	case err != nil:
		return err
	}
	ts := metav1.NewTime(now)
	pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds = &ts, &grace
	err = c.cfg.Metrics.timeProvider("DeletePod", func() error { return c.cfg.Provider.DeletePod(ctx, pod) })
	switch {
	case provider.IsNotFound(err):
		c.states.markTerminated(key, running.uid())
		c.sync.Add(key)
		return nil
	case err != nil:
		return fmt.Errorf("delete pod in provider: %w", err)
	}
	deadline := now.Add(time.Duration(grace)*time.Second + DefaultTerminationSlack)
	c.states.markTerminating(key, running.uid(), deadline)
	klog.FromContext(ctx).V(2).Info("Stopping pod in provider", "uid", running.uid(), "gracePeriodSeconds", grace)
	// The provider may have finished before markTerminating: look at the newest status again.
	if st, ok := c.states.get(key); ok && podstatus.Finished(st.status) {
		c.states.markTerminated(key, running.uid())
		c.sync.Add(key)
		return nil
	}
	c.sync.AddAfter(key, deadline.Sub(now))
	return nil
}

// podToDelete is a copy of the running pod for DeletePod: the desired pod while it is the
// running one (a graceful API deletion), else the pod as the provider runs it (removed or
// replaced). NotFound: the provider no longer has it.
func (c *PodController) podToDelete(ctx context.Context, running providerPod, desired *corev1.Pod) (*corev1.Pod, error) {
	if desired != nil && desired.UID == running.uid() {
		return desired.DeepCopy(), nil
	}
	pod, err := c.cfg.Provider.GetPod(ctx, running.meta.Namespace, running.meta.Name)
	switch {
	case provider.IsNotFound(err):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("get pod from provider before deleting it: %w", err)
	case pod.UID != running.uid():
		return nil, provider.NotFound("provider runs UID %s, not %s", pod.UID, running.uid())
	}
	return pod.DeepCopy(), nil
}

// gracePeriod: an API deletion's own grace period, or the pod's terminationGracePeriodSeconds
// for a removed or replaced static pod. A pod that vanished from the API server was force
// deleted: no grace.
func gracePeriod(running, desired *corev1.Pod) int64 {
	if desired != nil && desired.UID == running.UID && desired.DeletionGracePeriodSeconds != nil {
		return *desired.DeletionGracePeriodSeconds
	}
	if !podutil.IsStaticPod(running) && desired == nil {
		return 0
	}
	return int64(podutil.GracePeriod(running) / time.Second)
}

// deleteAPIPod completes a graceful deletion: grace 0, with the UID as precondition so that a
// new pod with the same name is never deleted.
func (c *PodController) deleteAPIPod(ctx context.Context, key string, pod *corev1.Pod) error {
	if c.static || podutil.IsStaticPod(pod) {
		return nil
	}
	c.deletedMu.Lock()
	done := c.deleted[key] == pod.UID
	c.deletedMu.Unlock()
	if done {
		return nil // sent already; the pod manager has yet to see it gone
	}
	opts := metav1.NewDeleteOptions(0)
	opts.Preconditions = metav1.NewUIDPreconditions(string(pod.UID))
	err := c.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *opts)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete terminated pod from the API server: %w", err)
	}
	c.deletedMu.Lock()
	if c.deleted == nil {
		c.deleted = map[string]types.UID{}
	}
	c.deleted[key] = pod.UID
	c.deletedMu.Unlock()
	klog.FromContext(ctx).V(2).Info("Deleted terminated pod from the API server", "uid", pod.UID)
	return nil
}

// forgetDeleted drops the record of key's DELETE once the pod is gone or not being deleted.
func (c *PodController) forgetDeleted(key string) {
	c.deletedMu.Lock()
	delete(c.deleted, key)
	c.deletedMu.Unlock()
}

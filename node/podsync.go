package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/kubeclient"
	"github.com/vk-static/vk-static/podstatus"
	"github.com/vk-static/vk-static/podutil"
	"github.com/vk-static/vk-static/provider"
)

// reconcile decides one full name, moving the pod it knows ([knownPod]) through the states
// of [knownState]: a gone pod is forgotten — or, an API pod being deleted, handed
// to the status workers, which write its terminal status and DELETE it (finishDeletion); a pod
// no longer wanted is stopped (terminate: podGiven → podDeleteSent → podGone); the
// wanted pod is created or updated (podGiven). It then finishes the API deletion of a pod the
// provider does not run and reconciles the mirror.
// Each step that must wait (for termination, for a source to be seen) returns and relies on
// the next event or a timed requeue; the periodic resync decides every key again in any case.
func (c *PodController) reconcile(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx).WithValues("podFullName", key)
	ctx = klog.NewContext(ctx, logger)
	desired, _ := c.cfg.Pods.GetPodByFullName(key)
	running, hasRunning := c.known.get(key)

	if hasRunning && running.state == podGone {
		if c.deletingFromAPI(running, desired) {
			c.status.Add(key) // finishDeletion; the state is forgotten there
			return nil        // an API pod: no mirror to reconcile
		}
		// The kubelet's SyncTerminatedPod: the full name is free for the next pod.
		c.known.forget(key, running.uid())
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

// deletingFromAPI: the provider's pod is the API pod being deleted gracefully (a deletion the
// agent completes in the API server; a pod removed from the API server is not).
func (c *PodController) deletingFromAPI(running knownPod, desired *corev1.Pod) bool {
	return !c.static && desired != nil && desired.DeletionTimestamp != nil && desired.UID == running.uid()
}

// syncStatus is the status workers' sync, the kubelet's status manager's syncPod: it writes the
// status of the pod under key and, once the provider's pod has terminated and the API pod is
// being deleted, completes the deletion (finishDeletion).
func (c *PodController) syncStatus(ctx context.Context, key string) error {
	if running, ok := c.known.get(key); ok && running.state == podGone {
		if desired, _ := c.cfg.Pods.GetPodByFullName(key); c.deletingFromAPI(running, desired) {
			return c.finishDeletion(ctx, key, running, desired)
		}
	}
	return c.writer.write(ctx, key)
}

// finishDeletion completes the graceful deletion of an API pod the provider has stopped, as the
// kubelet's status manager does: the terminal status first, then — in the same worker, at once —
// the DELETE with grace 0 (canBeDeleted: the pod shows its end before it goes, for controllers
// and users reading why it stopped), then the state is forgotten. A status the API server
// refuses (Invalid, Forbidden) never holds the DELETE back; any other failure of either is
// retried by the status queue, the state still terminated.
//
// It runs in the status workers (DefaultStatusWorkers), not the sync workers: both writes are an
// API round trip each, and at 1000 pods deleted at once ten sync workers, each waiting for both,
// were what bounded the deletion — not the API server (docs/performance.md, "All deleted").
func (c *PodController) finishDeletion(ctx context.Context, key string, running knownPod, desired *corev1.Pod) error {
	logger := klog.FromContext(ctx).WithValues("podFullName", key) // once per pod, as reconcile's
	ctx = klog.NewContext(ctx, logger)
	switch err := c.writer.write(ctx, key); {
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		logger.Error(err, "Terminal status refused; deleting the pod without it")
	case err != nil:
		return err
	}
	if err := c.deleteAPIPod(ctx, key, desired); err != nil {
		return err
	}
	c.known.forget(key, running.uid())
	return nil
}

// wanted: the provider's pod is the desired one and is not being deleted.
func wanted(running knownPod, desired *corev1.Pod) bool {
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
	c.known.set(key, trackPod(pod))
	// CreatePod, UpdatePod and DeletePod (podToDelete) get a deep copy, which the provider may
	// modify (provider.PodLifecycleHandler): the desired pod is shared, and an API pod shares
	// parts (labels, containers, conditions, ...) with other pods (sources' trimAPIPod), so a
	// shallow copy would not do.
	err := c.cfg.Metrics.timeProvider("CreatePod", func() error { return c.cfg.Provider.CreatePod(ctx, pod.DeepCopy()) })
	if err != nil {
		c.known.forget(key, pod.UID)
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
	c.known.updated(key, trackPod(pod))
	return nil
}

// terminate stops the running pod (the kubelet's SyncTerminatingPod): in podGiven it asks
// the provider to delete it (once) and moves it to podDeleteSent; in podDeleteSent it waits
// for the provider to report it finished (observe), or for the grace period (plus slack) to
// run out, and moves it to podGone.
func (c *PodController) terminate(ctx context.Context, key string, running knownPod, desired *corev1.Pod) error {
	now := c.cfg.Clock.Now()
	if running.state == podDeleteSent {
		if now.Before(running.deadline) {
			c.sync.AddAfter(key, running.deadline.Sub(now))
			return nil
		}
		klog.FromContext(ctx).Info("Grace period over before the provider reported termination; treating the pod as terminated", "uid", running.uid())
		c.known.markGone(key, running.uid())
		c.sync.Add(key)
		return nil
	}
	grace := gracePeriod(running.ref(), desired)
	pod, err := c.podToDelete(ctx, running, desired)
	switch {
	case provider.IsNotFound(err):
		c.known.markGone(key, running.uid())
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
		c.known.markGone(key, running.uid())
		c.sync.Add(key)
		return nil
	case err != nil:
		return fmt.Errorf("delete pod in provider: %w", err)
	}
	deadline := now.Add(time.Duration(grace)*time.Second + DefaultTerminationSlack)
	c.known.markDeleteSent(key, running.uid(), deadline)
	klog.FromContext(ctx).V(2).Info("Stopping pod in provider", "uid", running.uid(), "gracePeriodSeconds", grace)
	// The provider may have finished before markDeleteSent: look at the newest status again.
	if st, ok := c.known.get(key); ok && podstatus.Finished(st.status) {
		c.known.markGone(key, running.uid())
		c.sync.Add(key)
		return nil
	}
	c.sync.AddAfter(key, deadline.Sub(now))
	return nil
}

// podToDelete is a copy of the running pod for DeletePod: the desired pod while it is the
// running one (a graceful API deletion), else the pod as the provider runs it (removed or
// replaced). NotFound: the provider no longer has it.
func (c *PodController) podToDelete(ctx context.Context, running knownPod, desired *corev1.Pod) (*corev1.Pod, error) {
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
	// Claimed before it is sent: the status worker finishing the deletion and a sync of the
	// watch's echo of the terminal status never both send it.
	c.deletedMu.Lock()
	done := c.deleted[key] == pod.UID
	if !done {
		if c.deleted == nil {
			c.deleted = map[string]types.UID{}
		}
		c.deleted[key] = pod.UID
	}
	c.deletedMu.Unlock()
	if done {
		return nil // sent already; the pod manager has yet to see it gone
	}
	err := deletePod(ctx, c.cfg.Client, pod)
	if err != nil && !apierrors.IsNotFound(err) && !kubeclient.IsReplaced(err) {
		c.deletedMu.Lock()
		if c.deleted[key] == pod.UID {
			delete(c.deleted, key) // to be sent again by the retry
		}
		c.deletedMu.Unlock()
		return fmt.Errorf("delete terminated pod from the API server: %w", err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted terminated pod from the API server", "uid", pod.UID)
	return nil
}

// deletePod deletes pod with grace 0 and its UID as precondition. The API server answers with
// the pod, which nobody here reads (the watch brings the deletion): through a real REST client
// the answer is asked for as the pod's metadata only and dropped unread
// (kubeclient.SendDroppingAnswer), as the status patch's. A client without one (client-go's
// fake) takes the typed path.
func deletePod(ctx context.Context, client kubeclient.Interface, pod *corev1.Pod) error {
	opts := metav1.NewDeleteOptions(0)
	opts.Preconditions = metav1.NewUIDPreconditions(string(pod.UID))
	if rc, ok := client.CoreRESTClient().(*rest.RESTClient); ok && rc != nil {
		return kubeclient.SendDroppingAnswer(ctx, rc.Delete().Namespace(pod.Namespace).Resource("pods").Name(pod.Name).Body(opts))
	}
	return client.Pods(pod.Namespace).Delete(ctx, pod.Name, *opts)
}

// forgetDeleted drops the record of key's DELETE once the pod is gone or not being deleted.
func (c *PodController) forgetDeleted(key string) {
	c.deletedMu.Lock()
	delete(c.deleted, key)
	c.deletedMu.Unlock()
}

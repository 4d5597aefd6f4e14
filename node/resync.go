package node

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
)

// DefaultSyncFrequency is how often every pod is synced again although nothing told the
// controller to (the kubelet's --sync-frequency default).
const DefaultSyncFrequency = time.Minute

// resyncJitter spreads the resyncs over [SyncFrequency, 1.5×SyncFrequency), as the kubelet's pod
// workers do, so that pods started together are not all re-synced in the same instant.
const resyncJitter = 0.5

// scheduleResync queues key again after about SyncFrequency, once a sync or status write of it
// has succeeded, as long as anything still exists under it. This is what makes the controller
// level-triggered: an answer that looked final but was not (a 404 from an API server that is
// still starting, a refusal, a status patch whose successor never came) is decided again without
// any event. It is cheap when nothing differs: a sync reads only local state, and the status
// writer sends nothing when the API object already shows the status.
//
// The work queue keeps one pending entry per key (the earliest), so a key synced often by events
// still has a single resync waiting.
func (c *PodController) scheduleResync(q workqueue.TypedRateLimitingInterface[string], key string) {
	if !c.exists(key) {
		c.refusals.forget(key)
		return
	}
	q.AddAfter(key, wait.Jitter(c.cfg.SyncFrequency, resyncJitter))
}

// exists reports whether the controller has anything to keep current under key: a desired
// pod, a pod the provider runs, or a mirror pod.
func (c *PodController) exists(key string) bool {
	if _, ok := c.cfg.Pods.GetPodByFullName(key); ok {
		return true
	}
	if _, ok := c.states.get(key); ok {
		return true
	}
	if c.static {
		return false
	}
	_, ok := c.mirrorUnder(key)
	return ok
}

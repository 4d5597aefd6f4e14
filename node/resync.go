package node

import (
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultSyncFrequency is how often every pod is synced again although nothing told the
// controller to (the kubelet's --sync-frequency default).
const DefaultSyncFrequency = time.Minute

// resyncJitter spreads the resyncs over [SyncFrequency, 1.5×SyncFrequency), as the kubelet's pod
// workers do, so that pods started together are not all re-synced in the same instant.
const resyncJitter = 0.5

// synced follows every successful sync of key: it checks the key's status (the status writer
// sends nothing, and compares nothing, when the API object already shows it) and schedules the
// key's next sync after about SyncFrequency, as long as anything still exists under it.
//
// This is what makes the controller level-triggered: an answer that looked final but was not (a
// 404 from an API server that is still starting, a refusal, a status patch whose successor never
// came) is decided again without any event. It is cheap when nothing differs: a sync reads only
// local state. The work queue keeps one pending entry per key (the earliest), so a key synced
// often by events still has a single resync waiting.
func (c *PodController) synced(key string) {
	c.catchUp.Forget(key)
	c.refused.Forget(key)
	if !c.exists(key) {
		c.refusals.forget(key)
		return
	}
	if !c.static {
		c.status.Add(key)
	}
	c.sync.AddAfter(key, c.resyncDelay())
}

// resyncDelay is SyncFrequency with jitter, ending on a whole quantum (a second, or a tenth of
// SyncFrequency if less): the queue's timer then wakes once per quantum for every key due in it,
// not once per key.
func (c *PodController) resyncDelay() time.Duration {
	d := wait.Jitter(c.cfg.SyncFrequency, resyncJitter)
	quantum := min(time.Second, c.cfg.SyncFrequency/10)
	if quantum <= 0 {
		return d
	}
	due := c.cfg.Clock.Now().Add(d)
	if r := due.Sub(due.Truncate(quantum)); r > 0 {
		d += quantum - r
	}
	return d
}

// exists reports whether the controller has anything to keep current under key: a desired
// pod, a pod the provider runs, or a mirror pod.
func (c *PodController) exists(key string) bool {
	if _, ok := c.cfg.Pods.GetPodByFullName(key); ok {
		return true
	}
	if _, ok := c.known.get(key); ok {
		return true
	}
	if c.static {
		return false
	}
	_, ok := c.mirrorUnder(key)
	return ok
}

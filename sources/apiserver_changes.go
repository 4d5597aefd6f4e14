package sources

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/vk-static/vk-static/internal/watchstore"
	"github.com/vk-static/vk-static/podutil"
)

// podStore is what apiChanges reads from: a watchstore.Store of pods.
type podStore interface {
	List() []any
	GetByKey(key string) (any, bool, error)
}

// apiChanges is the API source's next snapshot, built up change by change while the consumer
// is busy: O(1) per changed key, and O(pods) only after a relist. A key that changes many times
// before the consumer is ready is in it once, in its newest version.
//
// Only APISource.Run's goroutine uses it. Its slices are handed to the receiver by sent, and
// never written to after that.
type apiChanges struct {
	// known is, by store key, the UID of the pod the receiver will have once this snapshot is
	// delivered. A key whose UID changes (deleted and re-created between two looks) or that
	// disappears puts the old UID in deleted.
	known map[string]types.UID

	full    bool // the pods are everything (a relist happened)
	changed bool // there is something to send
	pods    []*corev1.Pod
	slot    map[string]int // key → index in pods
	deleted []types.UID    // only for partial snapshots
}

func newAPIChanges() *apiChanges {
	return &apiChanges{known: map[string]types.UID{}, slot: map[string]int{}}
}

// ready reports whether there is a snapshot to send.
func (c *apiChanges) ready() bool { return c.changed }

// snapshot is the snapshot to send. It costs O(1), so the send loop may call it on every turn.
func (c *apiChanges) snapshot() Snapshot {
	return Snapshot{Source: podutil.APIServerSource, Pods: c.pods, Partial: !c.full, Deleted: c.deleted}
}

// sent starts the next snapshot: a partial one with nothing in it.
func (c *apiChanges) sent() {
	c.full, c.changed = false, false
	c.pods, c.deleted = nil, nil
	c.slot = map[string]int{}
}

// apply records the changes taken from store. Objects are read after the changes were taken,
// so they are at least as new as the changes.
func (c *apiChanges) apply(store podStore, changes watchstore.Changes) {
	if changes.Relisted {
		c.relist(store)
		return
	}
	for _, key := range changes.Keys {
		c.applyKey(store, key)
	}
}

// relist replaces everything pending with the store's full contents.
func (c *apiChanges) relist(store podStore) {
	objs := store.List()
	c.full, c.changed = true, true
	c.pods = make([]*corev1.Pod, 0, len(objs))
	c.slot = make(map[string]int, len(objs))
	c.deleted = nil
	c.known = make(map[string]types.UID, len(objs))
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}
		key, err := cache.MetaNamespaceKeyFunc(pod)
		if err != nil {
			continue
		}
		c.slot[key] = len(c.pods)
		c.pods = append(c.pods, pod)
		c.known[key] = pod.UID
	}
}

func (c *apiChanges) applyKey(store podStore, key string) {
	var pod *corev1.Pod
	if obj, exists, err := store.GetByKey(key); err == nil && exists {
		pod, _ = obj.(*corev1.Pod)
	}
	prev, hadPrev := c.known[key]
	if hadPrev && (pod == nil || pod.UID != prev) {
		// Gone, or replaced by a pod of the same name: the receiver must forget the old UID.
		// A full snapshot says so by leaving it out.
		if !c.full {
			c.deleted = append(c.deleted, prev)
		}
		delete(c.known, key)
		c.changed = true
	}
	if pod == nil {
		c.unslot(key)
		return
	}
	c.known[key] = pod.UID
	c.changed = true
	if i, ok := c.slot[key]; ok {
		c.pods[i] = pod // newest version wins
		return
	}
	c.slot[key] = len(c.pods)
	c.pods = append(c.pods, pod)
}

// unslot drops key's pod from the pending pods (swap with the last: order carries no meaning
// for API pods, whose full names are unique).
func (c *apiChanges) unslot(key string) {
	i, ok := c.slot[key]
	if !ok {
		return
	}
	last := len(c.pods) - 1
	if i != last {
		moved := c.pods[last]
		c.pods[i] = moved
		movedKey, _ := cache.MetaNamespaceKeyFunc(moved)
		c.slot[movedKey] = i
	}
	c.pods[last] = nil
	c.pods = c.pods[:last]
	delete(c.slot, key)
}

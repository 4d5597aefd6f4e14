package sources

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Snapshot is one source's pods at one moment: all of them (full), or only what changed since
// the source's previous snapshot (partial).
//
// A full snapshot is the source's complete set: a pod missing from it is gone from that source.
// File and HTTP sources only send full snapshots. The API source sends a full snapshot after
// every (re)list of the API server — deletions may have been missed while it was disconnected —
// and partial ones in between, so that one change costs O(1) and not O(pods on the node).
//
// A partial snapshot (Partial) holds the pods that were added or changed, in Pods, and the UIDs
// of the pods that are gone, in Deleted; the source's other pods are as before. A UID in both is
// present (Pods wins). A partial snapshot never makes its source seen: only a full one can say
// that the receiver has all of the source's pods.
//
// Pods in a snapshot are read-only: the sender may reuse them in later snapshots and the
// receiver may keep them. The receiver must not modify the slices or maps either.
type Snapshot struct {
	// Source is podutil.FileSource, podutil.HTTPSource or podutil.APIServerSource.
	Source string
	// Pods in the order the source found them (files by name, documents by position). When two
	// pods of one snapshot claim the same full name, the earlier one keeps it.
	Pods []*corev1.Pod
	// Locations optionally names where each pod came from (file path, URL), by UID. It is only
	// used to make Problems precise.
	Locations map[types.UID]string
	// Partial marks a snapshot that holds only changes (see above).
	Partial bool
	// Deleted are the UIDs of the pods gone since the previous snapshot; only read when
	// Partial. Unknown UIDs are ignored.
	Deleted []types.UID
	// Unreadable are the locations (file paths) that exist but yield no pod because their
	// content has not decoded since the source started; read only from full snapshots. A pod
	// the provider still runs from one of them (after an agent restart, the source has no last
	// good pod for it) must be kept, not stopped: see PodUpdate.Unreadable.
	Unreadable []string
}

// Op is the kind of a PodUpdate.
type Op int

// The operations, in the order the merger emits them for one snapshot.
const (
	// REMOVE: the pod is gone from its source; stop it (honouring its grace period) and forget it.
	REMOVE Op = iota
	// ADD: a pod the agent has not seen before.
	ADD
	// UPDATE: the pod's spec, labels, annotations or owner references changed.
	UPDATE
	// DELETE: graceful deletion of an API pod started (deletionTimestamp newly set, or its
	// grace period changed).
	DELETE
	// RECONCILE: only the pod's status changed in the API server.
	RECONCILE
)

func (o Op) String() string {
	switch o {
	case REMOVE:
		return "REMOVE"
	case ADD:
		return "ADD"
	case UPDATE:
		return "UPDATE"
	case DELETE:
		return "DELETE"
	case RECONCILE:
		return "RECONCILE"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// PodUpdate is what the merger emits: one operation on pods of one source. Pods are read-only.
type PodUpdate struct {
	Op     Op
	Source string
	Pods   []*corev1.Pod
	// SourceSeen marks the last update caused by the source's first snapshot (an empty first
	// snapshot yields one empty ADD carrying it). A consumer that applies updates as they
	// arrive knows, once it has applied this one, that it has every pod of the source — the
	// moment it may remove what the source no longer has (e.g. pods a provider still runs from
	// before a restart), with no window between "seen" and "applied".
	SourceSeen bool
	// Unreadable, when not nil, is the source's new set of unreadable locations (see
	// Snapshot.Unreadable), sent whenever the set changes in an update of its own (a RECONCILE
	// with no pods) ahead of the snapshot's other updates. A consumer keeps a pod it runs whose
	// ConfigFileAnnotationKey names one of them, as it would keep a last good pod.
	Unreadable map[string]bool
}

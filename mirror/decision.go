package mirror

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/vk-static/vk-static/podutil"
)

// Action is what must happen to the mirror of one pod full name.
type Action int

const (
	// None: the mirror is right, or nothing can be done now.
	None Action = iota
	// Create: create the static pod's mirror.
	Create
	// Recreate: delete the existing mirror (grace 0, with its UID as precondition), then
	// create the static pod's mirror. Mirrors are never updated in place.
	Recreate
	// Delete: delete the existing mirror (grace 0, with its UID as precondition) and create
	// nothing.
	Delete
)

// String returns the action's name.
func (a Action) String() string {
	switch a {
	case None:
		return "None"
	case Create:
		return "Create"
	case Recreate:
		return "Recreate"
	case Delete:
		return "Delete"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// DecisionInput is everything Decide looks at, for one pod full name.
type DecisionInput struct {
	// Static is the static pod wanted under this full name, nil when there is none.
	Static *corev1.Pod
	// Mirror is the pod the API server has under this full name, nil when it has none.
	Mirror *corev1.Pod
	// NodeUsable: the Node exists and is not being deleted, so a mirror can be owned by it
	// (UsableNode says so).
	NodeUsable bool
	// StaticTerminated: the static pod that last had this full name finished terminating in
	// the provider (or there never was one). Consulted only when Static is nil: an orphaned
	// mirror keeps reporting its pod until that pod is really gone.
	StaticTerminated bool
}

// Decide returns what must happen to the mirror, as the kubelet decides it:
//
//   - A mirror that is current (IsMirrorOf the static pod, not being deleted) is left alone.
//   - A stale mirror — its hash differs from the static pod's (the manifest was edited), or it
//     is being deleted (a user deleted it, even gracefully) — is recreated. When the Node is
//     missing or being deleted it is only deleted: no new mirror could be owned by the Node.
//   - A static pod with no mirror gets one, only while the Node exists and is not being
//     deleted.
//   - A mirror with no static pod (an orphan) is deleted once the static pod that had its name
//     finished terminating; until then it is left alone.
//   - A pod under that name without the config.mirror annotation is not a mirror and never
//     touched (the caller should not pass one; this is the safe answer if it does).
//
// Decide is pure: no I/O, no clock, no state.
func Decide(in DecisionInput) Action {
	if in.Mirror != nil && !podutil.IsMirrorPod(in.Mirror) {
		return None
	}
	canCreate := in.NodeUsable
	switch {
	case in.Static == nil && in.Mirror == nil:
		return None
	case in.Static == nil: // orphan
		if in.StaticTerminated {
			return Delete
		}
		return None
	case in.Mirror == nil:
		if canCreate {
			return Create
		}
		return None
	case in.Mirror.DeletionTimestamp == nil && IsMirrorOf(in.Mirror, in.Static):
		return None
	case canCreate:
		return Recreate
	default:
		return Delete
	}
}

// IsMirrorOf reports whether mirrorPod is a current representation of the static pod: same
// name and namespace, and a ConfigMirrorAnnotationKey equal to the static pod's non-empty
// ConfigHashAnnotationKey. The spec is never compared: the hash already covers the manifest,
// and the API server defaults fields the manifest left out, so specs always differ.
func IsMirrorOf(mirrorPod, static *corev1.Pod) bool {
	if mirrorPod == nil || static == nil {
		return false
	}
	if mirrorPod.Name != static.Name || mirrorPod.Namespace != static.Namespace {
		return false
	}
	hash, ok := mirrorPod.Annotations[podutil.ConfigMirrorAnnotationKey]
	return ok && hash != "" && hash == podutil.Hash(static)
}

package mirror

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Client creates and deletes mirror pods in the API server. Implementations are safe for
// concurrent use and do no caching: every call is one decision made against the live API.
type Client interface {
	// CreateMirrorPod creates the mirror of the static pod: the same name, namespace, labels,
	// annotations and spec, plus the ConfigMirrorAnnotationKey annotation set to the static
	// pod's hash and one controller owner reference to this Node (its live UID).
	//
	// It sends nothing and returns an error wrapping ErrNodeUnavailable when the Node cannot be
	// read or is being deleted, and an error wrapping ErrNotStatic when pod is not a static pod
	// with a hash bound to this node. When a pod with that name already exists it returns an
	// error wrapping ErrMirrorExists (and the API error): the caller must look at the existing
	// pod and decide again — it may be the right mirror already, a stale one, or being deleted.
	CreateMirrorPod(ctx context.Context, pod *corev1.Pod) error

	// DeleteMirrorPod deletes the pod with the given full name ("name_namespace") with grace
	// period 0 and, when uid is not nil, a UID precondition so that a newer mirror with the same
	// name is never deleted by mistake. It reports whether a pod was deleted. A pod that is
	// already gone, or whose UID no longer matches, is (false, nil): nothing to do. Any other
	// failure is returned, wrapped, so the caller retries.
	DeleteMirrorPod(ctx context.Context, podFullName string, uid *types.UID) (bool, error)
}

// Errors CreateMirrorPod and DeleteMirrorPod wrap; test for them with errors.Is.
var (
	// ErrMirrorExists: Create met AlreadyExists. Not a failure — the caller re-checks the pod
	// that is there (apierrors.IsAlreadyExists is true for the same error).
	ErrMirrorExists = errors.New("mirror pod already exists")
	// ErrNodeUnavailable: the Node object could not be read or is being deleted, so no mirror
	// can be owned by it; nothing was sent. Retry once the Node is back.
	ErrNodeUnavailable = errors.New("node unavailable for mirror pods")
	// ErrNotStatic: the pod given to Create cannot have a mirror (no config hash, it is itself a
	// mirror, or it is bound to another node). Retrying will not help.
	ErrNotStatic = errors.New("not a static pod of this node")
)

// mirror.go holds the package whole, in the order the mirror sync meets it: what must happen
// to a mirror (Decide, pure, with IsMirrorOf: is this the current mirror), then how it is done
// (Client: CreateMirrorPod and DeleteMirrorPod against the live API) and whether the Node can
// own mirrors (UsableNode).

package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/vk-static/vk-static/kubeclient"
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

// basicClient is the API-server Client. It holds no state of its own besides its
// configuration.
type basicClient struct {
	client     kubeclient.Interface
	nodeName   string
	nodeGetter NodeGetter // nil: read the Node from the API server on every create
}

// NewBasicMirrorClient returns a Client that writes mirror pods through client (which should
// carry the node identity system:node:<nodeName>, so NodeRestriction admits the mirrors).
// nodeGetter supplies the live Node for the owner reference; nil means a GET on the API server
// for every create (fine for tests and small agents; production passes an informer's lister).
func NewBasicMirrorClient(client kubeclient.Interface, nodeName string, nodeGetter NodeGetter) Client {
	return &basicClient{client: client, nodeName: nodeName, nodeGetter: nodeGetter}
}

func (c *basicClient) CreateMirrorPod(ctx context.Context, pod *corev1.Pod) error {
	if err := c.checkStatic(pod); err != nil {
		return err
	}
	node, err := c.liveNode(ctx)
	if err != nil {
		return err
	}
	mirrorPod := newMirrorPod(pod, node)
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Creating a mirror pod", "pod", klog.KObj(mirrorPod), "hash", podutil.Hash(pod))
	_, err = c.client.Pods(mirrorPod.Namespace).Create(ctx, mirrorPod, metav1.CreateOptions{})
	switch {
	case err == nil:
		return nil
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("create mirror pod %s: %w: %w", podutil.FullName(pod), ErrMirrorExists, err)
	default:
		return fmt.Errorf("create mirror pod %s: %w", podutil.FullName(pod), err)
	}
}

func (c *basicClient) DeleteMirrorPod(ctx context.Context, podFullName string, uid *types.UID) (bool, error) {
	name, namespace, err := podutil.ParseFullName(podFullName)
	if err != nil {
		return false, fmt.Errorf("delete mirror pod: %w", err)
	}
	opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if uid != nil {
		opts.Preconditions = &metav1.Preconditions{UID: ptr.To(*uid)}
	}
	logger := klog.FromContext(ctx)
	logger.V(2).Info("Deleting a mirror pod", "pod", klog.KRef(namespace, name), "podUID", ptr.Deref(uid, ""))
	err = c.client.Pods(namespace).Delete(ctx, name, opts)
	switch {
	case err == nil:
		return true, nil
	// Gone already, or replaced by a pod with another UID (the API server reports a failed UID
	// precondition as a Conflict): either way this mirror no longer exists.
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		logger.V(4).Info("Mirror pod already gone", "pod", klog.KRef(namespace, name), "reason", err.Error())
		return false, nil
	default:
		return false, fmt.Errorf("delete mirror pod %s: %w", podFullName, err)
	}
}

// checkStatic refuses pods whose mirror the API server would reject or that would not be a
// mirror at all, before anything is sent.
func (c *basicClient) checkStatic(pod *corev1.Pod) error {
	switch {
	case pod == nil:
		return fmt.Errorf("%w: nil pod", ErrNotStatic)
	case podutil.IsMirrorPod(pod):
		return fmt.Errorf("%w: %s is itself a mirror pod", ErrNotStatic, podutil.FullName(pod))
	case podutil.Hash(pod) == "":
		return fmt.Errorf("%w: %s has no %s annotation", ErrNotStatic, podutil.FullName(pod), podutil.ConfigHashAnnotationKey)
	case pod.Spec.NodeName != c.nodeName:
		return fmt.Errorf("%w: %s is bound to node %q, not %q", ErrNotStatic, podutil.FullName(pod), pod.Spec.NodeName, c.nodeName)
	}
	return nil
}

// liveNode returns the Node the mirror will be owned by (see UsableNode).
func (c *basicClient) liveNode(ctx context.Context) (*corev1.Node, error) {
	getter := c.nodeGetter
	if getter == nil {
		getter = NodeGetterFunc(func(name string) (*corev1.Node, error) {
			return c.client.Nodes().Get(ctx, name, metav1.GetOptions{})
		})
	}
	return UsableNode(getter, c.nodeName)
}

// newMirrorPod builds the object to create: only the static pod's name, namespace, labels,
// annotations and spec are copied — its UID, resource version and status belong to the
// agent, not the API server.
func newMirrorPod(static *corev1.Pod, node *corev1.Node) *corev1.Pod {
	annotations := maps.Clone(static.Annotations)
	annotations[podutil.ConfigMirrorAnnotationKey] = podutil.Hash(static)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        static.Name,
			Namespace:   static.Namespace,
			Labels:      maps.Clone(static.Labels),
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1",
				Kind:       "Node",
				Name:       node.Name,
				UID:        node.UID,
				Controller: ptr.To(true),
			}},
		},
		Spec: *static.Spec.DeepCopy(),
	}
}

// NodeGetter reads the agent's Node, typically from an informer's lister (the returned object
// is read-only). A NotFound error from the API machinery is the usual way to say it is missing.
type NodeGetter interface {
	Get(name string) (*corev1.Node, error)
}

// NodeGetterFunc adapts a function to NodeGetter.
type NodeGetterFunc func(name string) (*corev1.Node, error)

// Get calls f(name).
func (f NodeGetterFunc) Get(name string) (*corev1.Node, error) { return f(name) }

// UsableNode returns the Node named name if mirror pods can be owned by it — it exists, has a
// UID and is not being deleted (a mirror owned by a deleted Node would be garbage collected at
// once) — and otherwise an error wrapping ErrNodeUnavailable. It is the one place that decides
// whether the Node is usable, for Decide's input and for CreateMirrorPod alike.
func UsableNode(getter NodeGetter, name string) (*corev1.Node, error) {
	node, err := getter.Get(name)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: get node %s: %w", ErrNodeUnavailable, name, err)
	case node == nil:
		return nil, fmt.Errorf("%w: node %s not found", ErrNodeUnavailable, name)
	case node.DeletionTimestamp != nil:
		return nil, fmt.Errorf("%w: node %s is being deleted", ErrNodeUnavailable, name)
	case node.UID == "":
		return nil, fmt.Errorf("%w: node %s has no UID", ErrNodeUnavailable, name)
	}
	return node, nil
}

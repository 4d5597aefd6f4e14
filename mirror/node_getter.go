package mirror

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

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

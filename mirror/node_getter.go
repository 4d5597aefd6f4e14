package mirror

import corev1 "k8s.io/api/core/v1"

// NodeGetter reads the agent's Node, typically from an informer's lister (the returned object
// is read-only). A NotFound error from the API machinery is the usual way to say it is missing.
type NodeGetter interface {
	Get(name string) (*corev1.Node, error)
}

// NodeGetterFunc adapts a function to NodeGetter.
type NodeGetterFunc func(name string) (*corev1.Node, error)

// Get calls f(name).
func (f NodeGetterFunc) Get(name string) (*corev1.Node, error) { return f(name) }

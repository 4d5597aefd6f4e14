package agent

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vk-static/vk-static/internal/watchstore"
	"github.com/vk-static/vk-static/kubeclient"
)

// nodeWatch keeps this agent's Node object current (only this node: the Node authorizer lets a
// node read itself, and a full node list would be wasted work on a large cluster). It is the
// mirror client's and the pod controller's mirror.NodeGetter, and calls onIdentityChange when
// the Node appears, disappears, is re-created or starts being deleted — the only changes that
// matter to mirror pods (heartbeats change the Node every few seconds). The node controller
// reads it too, to compute the status without a GET.
type nodeWatch struct {
	name  string
	store *watchstore.Store

	mu               sync.Mutex
	lastUID          types.UID
	lastDeleting     bool
	onIdentityChange func()
}

func newNodeWatch(client kubeclient.Interface, name string) *nodeWatch {
	w := &nodeWatch{name: name}
	nodes := client.Nodes()
	lw := watchstore.NewListWatch(client, fields.OneTermEqualSelector("metadata.name", name).String(), nodes.List, nodes.Watch)
	w.store = watchstore.New(lw, &corev1.Node{}, w.changed)
	return w
}

func (w *nodeWatch) Run(ctx context.Context) error {
	w.store.Run(ctx)
	return nil
}

// Get implements mirror.NodeGetter: NotFound when the Node does not exist (or is not known yet).
func (w *nodeWatch) Get(name string) (*corev1.Node, error) {
	obj, ok, err := w.store.GetByKey(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	return obj.(*corev1.Node), nil
}

func (w *nodeWatch) changed() {
	var uid types.UID
	var deleting bool
	if n, err := w.Get(w.name); err == nil {
		uid, deleting = n.UID, n.DeletionTimestamp != nil
	}
	w.mu.Lock()
	changed := uid != w.lastUID || deleting != w.lastDeleting
	w.lastUID, w.lastDeleting = uid, deleting
	notify := w.onIdentityChange
	w.mu.Unlock()
	if changed && notify != nil {
		notify()
	}
}

// notify sets the callback for identity changes; call before Run.
func (w *nodeWatch) notify(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onIdentityChange = f
}

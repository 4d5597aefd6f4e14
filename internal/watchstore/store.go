package watchstore

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// Back-off between failed lists and watches: 100 ms doubling to at most MaxBackoff.
const (
	InitialBackoff = 100 * time.Millisecond
	MaxBackoff     = 2 * time.Second
)

// Store is a thread-safe cache of the objects lw lists and watches. Objects in it are shared
// and read-only.
type Store struct {
	lw       cache.ListerWatcher
	example  runtime.Object
	onChange func()
	store    cache.Store
	synced   atomic.Bool
}

// New returns a store of objects of example's type. onChange is called after every change
// (including the first full list); it must not block.
func New(lw cache.ListerWatcher, example runtime.Object, onChange func()) *Store {
	if onChange == nil {
		onChange = func() {}
	}
	return &Store{lw: lw, example: example, onChange: onChange, store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
}

// Run lists and watches until ctx is done.
func (s *Store) Run(ctx context.Context) {
	r := cache.NewReflectorWithOptions(s.lw, s.example, (*notifyingStore)(s), cache.ReflectorOptions{
		Backoff: &wait.Backoff{Duration: InitialBackoff, Factor: 2, Jitter: 0.2, Steps: 16, Cap: MaxBackoff},
	})
	r.RunWithContext(ctx)
}

// HasSynced reports whether the first full list has arrived.
func (s *Store) HasSynced() bool { return s.synced.Load() }

// List returns every object.
func (s *Store) List() []any { return s.store.List() }

// GetByKey returns the object with key ("namespace/name", or "name" for cluster objects).
func (s *Store) GetByKey(key string) (any, bool, error) { return s.store.GetByKey(key) }

// notifyingStore is the reflector's view of Store: every write is followed by onChange.
type notifyingStore Store

func (n *notifyingStore) Add(obj any) error {
	err := n.store.Add(obj)
	n.onChange()
	return err
}

func (n *notifyingStore) Update(obj any) error {
	err := n.store.Update(obj)
	n.onChange()
	return err
}

func (n *notifyingStore) Delete(obj any) error {
	err := n.store.Delete(obj)
	n.onChange()
	return err
}

func (n *notifyingStore) Replace(list []any, rv string) error {
	err := n.store.Replace(list, rv)
	n.synced.Store(true)
	n.onChange()
	return err
}

func (n *notifyingStore) Resync() error { return nil }

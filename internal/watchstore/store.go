package watchstore

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/vk-static/vk-static/backoff"
)

// Reconnect is the back-off between failed lists and watches: short, so that pods converge
// within seconds of an API server's return (client-go's informers wait up to 30 s).
func Reconnect() backoff.Policy {
	return backoff.Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second}
}

// Store is a thread-safe cache of the objects lw lists and watches. Objects in it are shared
// and read-only.
type Store struct {
	lw        cache.ListerWatcher
	example   runtime.Object
	onChange  func()
	transform cache.TransformFunc
	// store is keyed by namespace/name, a key computed once per write and shared with the
	// change record (and so with the reader's own maps of keys from TakeChanges): a
	// cache.Store computes its own, one more string per object (about 50 B a pod at api-1k).
	store  cache.ThreadSafeStore
	synced atomic.Bool

	// changes is nil unless TrackChanges was given.
	changes *changeLog
}

// Option configures a Store.
type Option func(*Store)

// WithTransform applies f to every object before it enters the store, like an informer's
// SetTransform: it may modify the object (it is the store's own, freshly decoded) and must not
// change its key. Use it to drop what no reader needs, such as managedFields. f must be
// idempotent: with a streaming initial list (WatchList) the reflector applies it as objects
// arrive and the store applies it again when they replace its contents. An error keeps the
// object out of the store and goes back to the reflector.
func WithTransform(f cache.TransformFunc) Option {
	return func(s *Store) { s.transform = f }
}

// TrackChanges makes the store record which keys changed, for TakeChanges. Without it the
// store records nothing and TakeChanges always reports a relist.
func TrackChanges() Option {
	return func(s *Store) { s.changes = &changeLog{keys: map[string]struct{}{}} }
}

// New returns a store of objects of example's type. onChange is called after every change
// (including the first full list); it must not block.
func New(lw cache.ListerWatcher, example runtime.Object, onChange func(), opts ...Option) *Store {
	if onChange == nil {
		onChange = func() {}
	}
	s := &Store{lw: lw, example: example, onChange: onChange, store: cache.NewThreadSafeStore(cache.Indexers{}, cache.Indices{})}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Run lists and watches until ctx is done.
func (s *Store) Run(ctx context.Context) {
	r := cache.NewReflectorWithOptions(s.lw, s.example, (*notifyingStore)(s), cache.ReflectorOptions{
		Backoff: Reconnect().WaitBackoff(0.2),
	})
	r.RunWithContext(ctx)
}

// HasSynced reports whether the first full list has arrived.
func (s *Store) HasSynced() bool { return s.synced.Load() }

// List returns every object.
func (s *Store) List() []any { return s.store.List() }

// GetByKey returns the object with key ("namespace/name", or "name" for cluster objects).
func (s *Store) GetByKey(key string) (any, bool, error) {
	obj, ok := s.store.Get(key)
	return obj, ok, nil
}

// TakeChanges returns what changed since the previous call (or since the store was created)
// and starts a new record. Read the objects after taking the changes: a recorded change is
// already in the store, so what GetByKey or List returns is at least that new; a change made
// after the call is recorded for the next one.
func (s *Store) TakeChanges() Changes {
	if s.changes == nil {
		return Changes{Relisted: true}
	}
	return s.changes.take()
}

// Changes is what changed in a Store between two TakeChanges calls.
type Changes struct {
	// Relisted means a full list replaced the contents (the first list, or a relist after the
	// watch was lost, when deletions may have been missed): any key may have changed, so the
	// reader must List. Keys is then empty.
	Relisted bool
	// Keys names each added, updated or deleted key once, in no particular order; a key that
	// GetByKey no longer finds was deleted.
	Keys []string
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool { return !c.Relisted && len(c.Keys) == 0 }

// changeLog collects changed keys between two takes: one entry per key, so memory is bounded
// by the keys changed since the last take, and a change costs O(1).
type changeLog struct {
	mu       sync.Mutex
	relisted bool
	keys     map[string]struct{}
}

func (l *changeLog) record(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.relisted {
		l.keys[key] = struct{}{}
	}
}

func (l *changeLog) recordRelist() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.relisted = true
	clear(l.keys) // the relist covers them
}

func (l *changeLog) take() Changes {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := Changes{Relisted: l.relisted}
	if len(l.keys) > 0 {
		c.Keys = make([]string, 0, len(l.keys))
		for k := range l.keys {
			c.Keys = append(c.Keys, k)
		}
		// A fresh map rather than clear: a burst may have grown it to the size of the store.
		l.keys = map[string]struct{}{}
	}
	l.relisted = false
	return c
}

// notifyingStore is the reflector's view of Store: every write is transformed on the way in,
// recorded, and followed by onChange.
type notifyingStore Store

func (n *notifyingStore) Add(obj any) error {
	obj, err := n.transformed(obj)
	if err != nil {
		return err
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err == nil {
		n.store.Add(key, obj)
	}
	n.changed(key, err)
	return keyError(obj, err)
}

func (n *notifyingStore) Update(obj any) error {
	obj, err := n.transformed(obj)
	if err != nil {
		return err
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err == nil {
		n.store.Update(key, obj)
	}
	n.changed(key, err)
	return keyError(obj, err)
}

func (n *notifyingStore) Delete(obj any) error {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err == nil {
		n.store.Delete(key)
	}
	n.changed(key, err)
	return keyError(obj, err)
}

func (n *notifyingStore) Replace(list []any, rv string) error {
	items := make(map[string]any, len(list))
	for _, obj := range list {
		obj, err := n.transformed(obj)
		if err != nil {
			return err
		}
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return keyError(obj, err)
		}
		items[key] = obj
	}
	n.store.Replace(items, rv)
	if n.changes != nil {
		n.changes.recordRelist()
	}
	n.synced.Store(true)
	n.onChange()
	return nil
}

func (n *notifyingStore) Resync() error { return nil }

// Transformer lets the reflector trim objects already while it streams the initial list
// (cache.TransformingStore), so the untrimmed list is never held in full.
func (n *notifyingStore) Transformer() cache.TransformFunc { return n.transform }

func (n *notifyingStore) transformed(obj any) (any, error) {
	if n.transform == nil {
		return obj, nil
	}
	return n.transform(obj)
}

// changed records key (unless keyErr: the object had none) — after the store holds the change,
// so a reader that takes the record finds it — and calls onChange.
func (n *notifyingStore) changed(key string, keyErr error) {
	if n.changes != nil && keyErr == nil {
		n.changes.record(key)
	}
	n.onChange()
}

// keyError is what a cache.Store returns for an object without a key (nil for nil).
func keyError(obj any, err error) error {
	if err == nil {
		return nil
	}
	return cache.KeyError{Obj: obj, Err: err}
}

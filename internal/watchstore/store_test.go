package watchstore

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"
)

// fakeLW lists what the test sets and hands every watch it opens to the test.
type fakeLW struct {
	mu      sync.Mutex
	list    []corev1.Pod
	rv      string
	lists   atomic.Int32
	watches chan *watch.FakeWatcher
}

func (f *fakeLW) setList(rv string, pods ...corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list, f.rv = pods, rv
}

func (f *fakeLW) ListWithContext(_ context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	f.lists.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	items := make([]corev1.Pod, len(f.list))
	for i := range f.list {
		f.list[i].DeepCopyInto(&items[i])
	}
	return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: f.rv}, Items: items}, nil
}

func (f *fakeLW) WatchWithContext(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(10, false)
	select {
	case f.watches <- w:
	case <-ctx.Done():
	}
	return w, nil
}

func (f *fakeLW) List(o metav1.ListOptions) (runtime.Object, error) {
	return f.ListWithContext(context.Background(), o)
}

func (f *fakeLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return f.WatchWithContext(context.Background(), o)
}

// Plain list and watch: the fake cannot stream the initial list.
func (f *fakeLW) IsWatchListSemanticsUnSupported() bool { return true }

func testPod(name, rv string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "test"}},
	}}
}

func names(objs []any) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod).Name)
	}
	sort.Strings(out)
	return out
}

func TestStoreTracksChangesAndTransforms(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	lw := &fakeLW{watches: make(chan *watch.FakeWatcher, 1)}
	lw.setList("1", testPod("a", "1"), testPod("b", "1"))
	var notified atomic.Int32
	trim := func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			p.ManagedFields = nil
		}
		return obj, nil
	}
	s := New(lw, &corev1.Pod{}, func() { notified.Add(1) }, TrackChanges(), WithTransform(trim))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Run(ctx)
	}()
	defer func() { cancel(); wg.Wait() }()

	require.Eventually(t, s.HasSynced, 10*time.Second, time.Millisecond, "synced")
	assert.Equal(t, Changes{Relisted: true}, s.TakeChanges(), "the first list is a relist")
	assert.True(t, s.TakeChanges().Empty(), "taken")
	assert.Equal(t, []string{"a", "b"}, names(s.List()))
	for _, o := range s.List() {
		assert.Nil(t, o.(*corev1.Pod).ManagedFields, "transformed on the way in (list)")
	}

	w := <-lw.watches
	c := testPod("c", "2")
	a := testPod("a", "3")
	b := testPod("b", "4")
	w.Add(&c)
	w.Modify(&a)
	w.Modify(&a)
	w.Delete(&b)
	keys := map[string]bool{}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		ch := s.TakeChanges()
		assert.False(t, ch.Relisted) // t, not c: a relist is a failure, not something to wait out
		for _, k := range ch.Keys {
			keys[k] = true
		}
		assert.Len(c, keys, 3, "keys changed")
	}, 10*time.Second, time.Millisecond, "three keys changed")
	assert.Equal(t, map[string]bool{"ns/a": true, "ns/b": true, "ns/c": true}, keys)
	_, exists, err := s.GetByKey("ns/b")
	require.NoError(t, err)
	assert.False(t, exists, "a deleted key is not found")
	obj, exists, err := s.GetByKey("ns/a")
	require.NoError(t, err)
	require.True(t, exists)
	assert.Equal(t, "3", obj.(*corev1.Pod).ResourceVersion)
	assert.Nil(t, obj.(*corev1.Pod).ManagedFields, "transformed on the way in (watch)")
	assert.GreaterOrEqual(t, notified.Load(), int32(5), "onChange after the list and every event")

	// The watch expires; the relist misses c (deleted while disconnected) and finds d.
	lw.setList("9", testPod("a", "3"), testPod("d", "9"))
	w.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
	require.Eventually(t, func() bool { return lw.lists.Load() == 2 && s.TakeChanges().Relisted }, 10*time.Second, time.Millisecond, "relisted")
	assert.Equal(t, []string{"a", "d"}, names(s.List()))
	<-lw.watches // the new watch
}

func TestStoreWithoutTracking(t *testing.T) {
	s := New(&fakeLW{}, &corev1.Pod{}, nil)
	assert.Equal(t, Changes{Relisted: true}, s.TakeChanges(), "without tracking every take says: list")
}

func TestChangeLog(t *testing.T) {
	l := &changeLog{keys: map[string]struct{}{}}
	l.record("x")
	l.record("y")
	l.record("x")
	c := l.take()
	sort.Strings(c.Keys)
	assert.Equal(t, Changes{Keys: []string{"x", "y"}}, c)
	assert.True(t, l.take().Empty())
	l.record("x")
	l.recordRelist()
	l.record("z") // covered by the relist that is not taken yet
	assert.Equal(t, Changes{Relisted: true}, l.take())
	l.record("z")
	assert.Equal(t, Changes{Keys: []string{"z"}}, l.take())
}

var _ cache.ListerWatcher = &fakeLW{}

func TestStoreOffersItsTransformToTheReflector(t *testing.T) {
	var _ cache.TransformingStore = &notifyingStore{}
	called := false
	s := New(&fakeLW{}, &corev1.Pod{}, nil, WithTransform(func(o any) (any, error) { called = true; return o, nil }))
	f := (*notifyingStore)(s).Transformer()
	require.NotNil(t, f)
	_, _ = f(&corev1.Pod{})
	assert.True(t, called)
	assert.Nil(t, (*notifyingStore)(New(&fakeLW{}, &corev1.Pod{}, nil)).Transformer())
}

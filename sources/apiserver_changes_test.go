package sources

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/vk-static/vk-static/internal/watchstore"
	"github.com/vk-static/vk-static/podutil"
)

// describe renders a snapshot as "full a@1 b@2" or "partial a@1 -3" (sorted; -UID is deleted).
func describe(s Snapshot) string {
	var parts []string
	for _, p := range s.Pods {
		parts = append(parts, p.Name+"@"+string(p.UID)+":"+p.ResourceVersion)
	}
	for _, uid := range s.Deleted {
		parts = append(parts, "-"+string(uid))
	}
	sort.Strings(parts)
	kind := "full"
	if s.Partial {
		kind = "partial"
	}
	for _, p := range parts {
		kind += " " + p
	}
	return kind
}

// TestAPIChanges drives the API source's pending snapshot the way Run does: changes taken from
// the store, applied, and sent when the consumer is ready.
func TestAPIChanges(t *testing.T) {
	type op struct {
		set    []*corev1.Pod // added or updated in the store
		remove []string      // names deleted from the store
		relist bool
		send   string // when set: the snapshot to be ready, described; "none" for nothing to send
	}
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"the first relist is a full snapshot, even empty", []op{
			{relist: true, send: "full"},
			{send: "none"},
		}},
		{"changes after a send are partial; a burst to one pod yields its newest version once", []op{
			{set: []*corev1.Pod{pod("a@1", rv("1")), pod("b@2", rv("1"))}, relist: true, send: "full a@1:1 b@2:1"},
			{set: []*corev1.Pod{pod("a@1", rv("2"))}},
			{set: []*corev1.Pod{pod("a@1", rv("3"))}},
			{set: []*corev1.Pod{pod("c@3", rv("1"))}},
			{set: []*corev1.Pod{pod("a@1", rv("4"))}, send: "partial a@1:4 c@3:1"},
			{send: "none"},
		}},
		{"a deletion sends the UID; a pod re-created under its name sends both", []op{
			{set: []*corev1.Pod{pod("a@1", rv("1")), pod("b@2", rv("1"))}, relist: true, send: "full a@1:1 b@2:1"},
			{remove: []string{"b"}, send: "partial -2"},
			{remove: []string{"a"}},
			{set: []*corev1.Pod{pod("a@9", rv("5"))}, send: "partial -1 a@9:5"},
		}},
		{"a pod changed and then deleted before the send is only deleted", []op{
			{set: []*corev1.Pod{pod("a@1", rv("1")), pod("b@2", rv("1")), pod("c@3", rv("1"))}, relist: true, send: "full a@1:1 b@2:1 c@3:1"},
			{set: []*corev1.Pod{pod("a@1", rv("2")), pod("b@2", rv("2")), pod("c@3", rv("2"))}},
			{remove: []string{"a"}, send: "partial -1 b@2:2 c@3:2"},
		}},
		{"a relist replaces what is pending with a full snapshot; later changes fold into it", []op{
			{set: []*corev1.Pod{pod("a@1", rv("1")), pod("b@2", rv("1"))}, relist: true, send: "full a@1:1 b@2:1"},
			{remove: []string{"a"}},
			{set: []*corev1.Pod{pod("c@3", rv("1"))}, relist: true},
			{remove: []string{"b"}},
			{set: []*corev1.Pod{pod("c@3", rv("2")), pod("d@4", rv("1"))}, send: "full c@3:2 d@4:1"},
			{remove: []string{"c"}, send: "partial -3"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			pending := newAPIChanges()
			for i, o := range tc.ops {
				var changes watchstore.Changes
				for _, p := range o.set {
					require.NoError(t, store.Update(p))
					changes.Keys = append(changes.Keys, p.Namespace+"/"+p.Name)
				}
				for _, name := range o.remove {
					require.NoError(t, store.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}))
					changes.Keys = append(changes.Keys, "default/"+name)
				}
				if o.relist {
					changes = watchstore.Changes{Relisted: true}
				}
				pending.apply(store, changes)
				switch o.send {
				case "":
				case "none":
					assert.False(t, pending.ready(), "op %d: nothing to send", i)
				default:
					require.True(t, pending.ready(), "op %d: a snapshot to send", i)
					s := pending.snapshot()
					assert.Equal(t, podutil.APIServerSource, s.Source)
					assert.Equal(t, o.send, describe(s), "op %d", i)
					pending.sent()
				}
			}
		})
	}
}

// A sent snapshot belongs to the receiver: later changes never write to its slices.
func TestAPIChangesNeverWritesASentSnapshot(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	pending := newAPIChanges()
	pending.apply(store, watchstore.Changes{Relisted: true})
	pending.sent()
	for _, p := range []*corev1.Pod{pod("a@1", rv("1")), pod("b@2", rv("1"))} {
		require.NoError(t, store.Add(p))
	}
	pending.apply(store, watchstore.Changes{Keys: []string{"default/a", "default/b"}})
	sent := pending.snapshot()
	before := describe(sent)
	pending.sent()
	require.NoError(t, store.Update(pod("b@2", rv("2"))))
	require.NoError(t, store.Delete(pod("a@1")))
	pending.apply(store, watchstore.Changes{Keys: []string{"default/b", "default/a"}})
	assert.Equal(t, before, describe(sent))
	assert.Equal(t, "partial -1 b@2:2", describe(pending.snapshot()))
}

func TestTrimAPIPod(t *testing.T) {
	p := pod("a@1", rv("1"), mirrorOf("h"))
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-apiserver"}}
	out, err := trimAPIPod(p)
	require.NoError(t, err)
	assert.Same(t, p, out, "the store's own object is trimmed in place")
	assert.Nil(t, p.ManagedFields)
	assert.Equal(t, podutil.APIServerSource, p.Annotations[podutil.ConfigSourceAnnotationKey], "mirror pods too are from the API source")
	assert.Equal(t, "h", p.Annotations[podutil.ConfigMirrorAnnotationKey])

	bare := pod("b@2")
	_, err = trimAPIPod(bare)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{podutil.ConfigSourceAnnotationKey: podutil.APIServerSource}, bare.Annotations)

	other := &corev1.Node{}
	out, err = trimAPIPod(other)
	require.NoError(t, err)
	assert.Same(t, other, out)
}

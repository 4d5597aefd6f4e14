package sources

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/vk-static/vk-static/internal/watchstore"
)

// delta builds a partial snapshot: the changed pods and the UIDs gone.
func delta(source string, gone []string, pods ...*corev1.Pod) Snapshot {
	s := Snapshot{Source: source, Pods: pods, Partial: true}
	for _, uid := range gone {
		s.Deleted = append(s.Deleted, types.UID(uid))
	}
	return s
}

func TestMergerPartialTranscripts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a partial snapshot touches only the pods it names", []step{
			{in: snap(api, pod("a@1", rv("1")), pod("b@2", rv("1")), pod("c@3", rv("1"))), want: []string{"ADD api a@1 b@2 c@3"}},
			{in: delta(api, nil, pod("b@2", rv("2"), label("x", "y"))), want: []string{"UPDATE api b@2"}},
			{in: delta(api, nil, pod("c@3", rv("2"), phase(corev1.PodRunning)), pod("d@4", rv("1"))), want: []string{"ADD api d@4", "RECONCILE api c@3"}},
			{in: delta(api, nil, pod("a@1", rv("2"), deleting(30))), want: []string{"DELETE api a@1"}},
			{in: delta(api, nil, pod("a@1", rv("2"), deleting(30))), want: nil}, // the same version again
			{in: delta(api, nil), want: nil},
			// The pods the partials left alone are all still there: a full snapshot of them is silent.
			{in: snap(api, pod("a@1", rv("2"), deleting(30)), pod("b@2", rv("2"), label("x", "y")), pod("c@3", rv("2"), phase(corev1.PodRunning)), pod("d@4", rv("1"))), want: nil},
		}},
		{"a delete removes only that UID; unknown UIDs are ignored", []step{
			{in: snap(api, pod("a@1", rv("1")), pod("b@2", rv("1"))), want: []string{"ADD api a@1 b@2"}},
			{in: delta(api, []string{"2", "never-seen"}), want: []string{"REMOVE api b@2"}},
			{in: delta(api, []string{"2"}), want: nil},
			{in: snap(api, pod("a@1", rv("1"))), want: nil},
		}},
		{"a pod deleted and re-created under its name between two snapshots", []step{
			{in: snap(api, pod("x@1", rv("1"))), want: []string{"ADD api x@1"}},
			{in: delta(api, []string{"1"}, pod("x@2", rv("5"))), want: []string{"REMOVE api x@1", "ADD api x@2"}},
		}},
		{"a UID both deleted and present is present", []step{
			{in: snap(api, pod("a@1", rv("1"))), want: []string{"ADD api a@1"}},
			{in: delta(api, []string{"1"}, pod("a@1", rv("2"), label("k", "v"))), want: []string{"UPDATE api a@1"}},
		}},
		{"a relist finds the removal a disconnected watch missed", []step{
			{in: snap(api, pod("a@1", rv("1")), pod("b@2", rv("1")), pod("c@3", rv("1"))), want: []string{"ADD api a@1 b@2 c@3"}},
			{in: delta(api, nil, pod("a@1", rv("2"), label("v", "2"))), want: []string{"UPDATE api a@1"}},
			// Disconnected: b was deleted and c changed, and no event said so. The relist is full.
			{in: snap(api, pod("a@1", rv("2"), label("v", "2")), pod("c@3", rv("9"), phase(corev1.PodRunning))), want: []string{"REMOVE api b@2", "RECONCILE api c@3"}},
			// Partials continue from the relisted state.
			{in: delta(api, []string{"3"}), want: []string{"REMOVE api c@3"}},
		}},
		{"a partial snapshot before the first full one is applied; removals by the full one follow", []step{
			{in: delta(api, nil, pod("a@1", rv("1")), pod("b@2", rv("1"))), want: []string{"ADD api a@1 b@2"}},
			{in: snap(api, pod("a@1", rv("1")), pod("c@3", rv("1"))), want: []string{"REMOVE api b@2", "ADD api c@3"}},
		}},
		{"a name released by a partial snapshot admits the waiting pod of another source", []step{
			{in: snap(api, pod("x@1", rv("1"))), want: []string{"ADD api x@1"}},
			{in: snap(file, pod("x@2", static(file))), want: nil, problems: []string{"x_default is already taken by the pod with UID 1"}},
			{in: delta(api, []string{"1"}), want: []string{"REMOVE api x@1", "ADD file x@2"}},
		}},
		{"a partial snapshot keeps the source's waiting pods it does not mention", []step{
			{in: snap(file, pod("x@1", static(file)), pod("y@2", static(file))), want: []string{"ADD file x@1 y@2"}},
			{in: snap(api, pod("x@3", rv("1")), pod("y@4", rv("1"))), want: nil, problems: []string{"x_default is already taken", "y_default is already taken"}},
			{in: delta(api, []string{"4"}, pod("z@5", rv("1"))), want: []string{"ADD api z@5"}}, // y@4 gone, x@3 still waits
			{in: delta(api, nil, pod("x@3", rv("2"))), want: nil},                               // waits again, not reported again
			{in: snap(file, pod("y@2", static(file))), want: []string{"REMOVE file x@1", "ADD api x@3"}},
			{in: snap(file, pod("y@2", static(file))), want: nil}, // y@4 was deleted: it must not come back
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runTranscript(t, NewMerger(), tc.steps)
		})
	}
}

func TestMergerSeenOnlyByAFullSnapshot(t *testing.T) {
	m := NewMerger()
	merge(m, delta(api, nil, pod("a@1", rv("1"))))
	assert.False(t, m.Seen(api), "a partial snapshot cannot tell the receiver it has every pod")
	merge(m, snap(api, pod("a@1", rv("1"))))
	assert.True(t, m.Seen(api))
	merge(m, delta(api, []string{"1"}))
	assert.True(t, m.Seen(api), "seen stays")
}

// A pod the API source already stamped is emitted as it is: no copy per pod.
func TestMergerEmitsStampedAPIPodsWithoutCopying(t *testing.T) {
	in := pod("a@1", rv("1"))
	_, err := trimAPIPod(in)
	require.NoError(t, err)
	m := NewMerger()
	added := merge(m, snap(api, in))
	require.Equal(t, []string{"ADD api a@1"}, render(added))
	assert.Same(t, in, added[0].Pods[0])
	next := pod("a@1", rv("2"), phase(corev1.PodRunning))
	_, err = trimAPIPod(next)
	require.NoError(t, err)
	reconciled := merge(m, delta(api, nil, next))
	require.Equal(t, []string{"RECONCILE api a@1"}, render(reconciled))
	assert.Same(t, next, reconciled[0].Pods[0])
}

// benchmarkPods returns n stamped API pods, as the watch store holds them.
func benchmarkPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = pod(fmt.Sprintf("p%d@%d", i, i), rv("1"))
		_, _ = trimAPIPod(pods[i])
	}
	return pods
}

// BenchmarkMerger10k is the per-change cost of the API source and the Merger on a node with
// 10,000 pods, from the changed pod being in the watch store to its update: "full" is the old
// way (list the store, merge the full snapshot), "partial" the new one (the changed key,
// merged as a partial snapshot).
func BenchmarkMerger10k(b *testing.B) {
	const n = 10000
	changed := func(i int) *corev1.Pod {
		p := pod(fmt.Sprintf("p%d@%d", i%n, i%n), rv(fmt.Sprint(i+2)), label("n", fmt.Sprint(i)))
		_, _ = trimAPIPod(p)
		return p
	}
	b.Run("full", func(b *testing.B) {
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		pods := benchmarkPods(n)
		for _, p := range pods {
			require.NoError(b, store.Add(p))
		}
		m := NewMerger()
		merge(m, snap(api, pods...))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p := changed(i)
			require.NoError(b, store.Update(p))
			b.StartTimer()
			objs := store.List()
			next := make([]*corev1.Pod, 0, len(objs))
			for _, o := range objs {
				next = append(next, o.(*corev1.Pod))
			}
			if got := merge(m, snap(api, next...)); len(got) != 1 {
				b.Fatalf("want one update, got %v", render(got))
			}
		}
	})
	b.Run("partial", func(b *testing.B) {
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		pods := benchmarkPods(n)
		for _, p := range pods {
			require.NoError(b, store.Add(p))
		}
		pending := newAPIChanges()
		pending.apply(store, watchstore.Changes{Relisted: true})
		m := NewMerger()
		merge(m, pending.snapshot())
		pending.sent()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			p := changed(i)
			require.NoError(b, store.Update(p))
			key, _ := cache.MetaNamespaceKeyFunc(p)
			b.StartTimer()
			pending.apply(store, watchstore.Changes{Keys: []string{key}})
			if got := merge(m, pending.snapshot()); len(got) != 1 {
				b.Fatalf("want one update, got %v", render(got))
			}
			pending.sent()
		}
	})
}

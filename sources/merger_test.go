package sources

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/vk-static/vk-static/podutil"
)

// pod builds a test pod: "name@uid" plus options.
func pod(nameAtUID string, opts ...func(*corev1.Pod)) *corev1.Pod {
	name, uid, _ := strings.Cut(nameAtUID, "@")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func static(source string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{
			podutil.ConfigSourceAnnotationKey:    source,
			podutil.ConfigHashAnnotationKey:      string(p.UID),
			podutil.ConfigFirstSeenAnnotationKey: "t0",
		}
	}
}

func seenAt(t string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations[podutil.ConfigFirstSeenAnnotationKey] = t }
}

func mirrorOf(hash string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Annotations = map[string]string{podutil.ConfigMirrorAnnotationKey: hash, podutil.ConfigSourceAnnotationKey: podutil.FileSource}
	}
}

func label(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
	}
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func deleting(grace int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.DeletionTimestamp = &metav1.Time{Time: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		p.DeletionGracePeriodSeconds = &grace
	}
}

func rv(v string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.ResourceVersion = v } }

func snap(source string, pods ...*corev1.Pod) Snapshot { return Snapshot{Source: source, Pods: pods} }

// render writes updates as transcript lines: "ADD api a@1 b@2".
// merge is MergeAndReport for the tests that look at the updates only.
func merge(m *Merger, s Snapshot) []PodUpdate {
	updates, _ := m.MergeAndReport(s)
	return updates
}

func render(updates []PodUpdate) []string {
	var lines []string
	for _, u := range updates {
		line := u.Op.String() + " " + u.Source
		for _, p := range u.Pods {
			line += " " + p.Name + "@" + string(p.UID)
		}
		if u.Unreadable != nil {
			line += " unreadable=" + strings.Join(slices.Sorted(maps.Keys(u.Unreadable)), ",")
		}
		lines = append(lines, line)
	}
	return lines
}

type step struct {
	in       Snapshot
	want     []string
	problems []string // substrings, one per reported problem
}

func runTranscript(t *testing.T, m *Merger, steps []step) {
	t.Helper()
	for i, s := range steps {
		updates, problems := m.MergeAndReport(s.in)
		assert.Equal(t, s.want, render(updates), "step %d (%s)", i, s.in.Source)
		require.Len(t, problems, len(s.problems), "step %d problems: %v", i, problems)
		for j, p := range problems {
			assert.Contains(t, p.Err.Error(), s.problems[j], "step %d", i)
		}
	}
}

const (
	api  = podutil.APIServerSource
	file = podutil.FileSource
	web  = podutil.HTTPSource
)

func TestMergerTranscripts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first snapshots add, in snapshot order; an empty one adds nothing", []step{
			{in: snap(api, pod("b@2"), pod("a@1")), want: []string{"ADD api b@2 a@1"}},
			{in: snap(file), want: nil},
		}},
		{"an unchanged snapshot is silent", []step{
			{in: snap(file, pod("a@1", static(file))), want: []string{"ADD file a@1"}},
			{in: snap(file, pod("a@1", static(file))), want: nil},
			{in: snap(file, pod("a@1", static(file), seenAt("t1"))), want: nil},
		}},
		{"an edited static pod is REMOVE old + ADD new, removals first", []step{
			{in: snap(file, pod("a@1", static(file)), pod("b@2", static(file))), want: []string{"ADD file a@1 b@2"}},
			{in: snap(file, pod("a@3", static(file)), pod("b@2", static(file))), want: []string{"REMOVE file a@1", "ADD file a@3"}},
		}},
		{"API pods: update, graceful delete, status, gone", []step{
			{in: snap(api, pod("a@1", rv("1")), pod("b@2", rv("1")), pod("c@3", rv("1")), pod("d@4", rv("1"))), want: []string{"ADD api a@1 b@2 c@3 d@4"}},
			{in: snap(api, pod("a@1", rv("2"), label("x", "y")), pod("b@2", rv("2"), deleting(30)), pod("c@3", rv("2"), phase(corev1.PodRunning)), pod("e@5", rv("1"))),
				want: []string{"REMOVE api d@4", "ADD api e@5", "UPDATE api a@1", "DELETE api b@2", "RECONCILE api c@3"}},
			{in: snap(api, pod("a@1", rv("2"), label("x", "y")), pod("b@2", rv("3"), deleting(30), label("z", "1")), pod("c@3", rv("2"), phase(corev1.PodRunning)), pod("e@5", rv("1"))),
				want: []string{"UPDATE api b@2"}},
			{in: snap(api, pod("a@1", rv("2"), label("x", "y")), pod("b@2", rv("4"), deleting(0), label("z", "1")), pod("c@3", rv("2"), phase(corev1.PodRunning)), pod("e@5", rv("1"))),
				want: []string{"DELETE api b@2"}},
		}},
		{"the same resourceVersion is no change even if the object differs", []step{
			{in: snap(api, pod("a@1", rv("7"))), want: []string{"ADD api a@1"}},
			{in: snap(api, pod("a@1", rv("7"), label("ignored", "yes"))), want: nil},
		}},
		{"sources do not wait for each other", []step{
			{in: snap(file, pod("s@1", static(file))), want: []string{"ADD file s@1"}},
			{in: snap(file), want: []string{"REMOVE file s@1"}},
			{in: snap(web, pod("h@2", static(web))), want: []string{"ADD http h@2"}},
		}},
		{"a duplicate name across sources: the first keeps it, the later waits and is admitted when it is free", []step{
			{in: snap(api, pod("x@1", rv("1"))), want: []string{"ADD api x@1"}},
			{in: snap(file, pod("x@2", static(file)), pod("y@3", static(file))), want: []string{"ADD file y@3"}, problems: []string{"duplicate pod name: x_default is already taken by the pod with UID 1 from the api source"}},
			{in: snap(file, pod("x@2", static(file)), pod("y@3", static(file))), want: nil}, // reported once
			{in: snap(api), want: []string{"REMOVE api x@1", "ADD file x@2"}},
			{in: snap(api, pod("x@4", rv("1"))), want: nil, problems: []string{"x_default is already taken by the pod with UID 2 from the file source"}},
		}},
		{"a duplicate name within a snapshot: the earlier pod keeps it", []step{
			{in: snap(file, pod("x@1", static(file)), pod("x@2", static(file))), want: []string{"ADD file x@1"}, problems: []string{"x_default is already taken by the pod with UID 1"}},
			{in: snap(file, pod("x@2", static(file))), want: []string{"REMOVE file x@1", "ADD file x@2"}},
		}},
		{"a mirror pod shares its static pod's name", []step{
			{in: snap(file, pod("x@s", static(file))), want: []string{"ADD file x@s"}},
			{in: snap(api, pod("x@m", mirrorOf("s"), rv("1"))), want: []string{"ADD api x@m"}},
			{in: snap(api), want: []string{"REMOVE api x@m"}},
		}},
		{"pods without a UID or twice in one snapshot are rejected", []step{
			{in: snap(web, pod("a@"), pod("b@1", static(web)), pod("c@1", static(web))), want: []string{"ADD http b@1"}, problems: []string{"no UID", "appears twice"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runTranscript(t, NewMerger(), tc.steps)
		})
	}
}

func TestMergerSeen(t *testing.T) {
	m := NewMerger()
	assert.False(t, m.Seen(file))
	merge(m, snap(file))
	assert.True(t, m.Seen(file))
	assert.False(t, m.Seen(api))
}

func TestMergerStampsWithoutMutating(t *testing.T) {
	m := NewMerger()
	in := pod("a@1", rv("1"))
	out := merge(m, snap(api, in))[0].Pods[0]
	assert.Equal(t, api, out.Annotations[podutil.ConfigSourceAnnotationKey])
	assert.Nil(t, in.Annotations, "the informer's object must not be modified")

	// A mirror pod is marked as coming from the API source, like the kubelet does.
	mirror := pod("m@2", mirrorOf("h"), rv("1"))
	out = merge(m, snap(api, in, mirror))[0].Pods[0]
	assert.Equal(t, api, out.Annotations[podutil.ConfigSourceAnnotationKey])
	assert.True(t, podutil.IsMirrorPod(out))
	assert.Equal(t, podutil.FileSource, mirror.Annotations[podutil.ConfigSourceAnnotationKey])
}

// A static pod whose manifest sets its UID can change under the same UID: UPDATE, keeping the
// first-seen time.
func TestMergerKeepsFirstSeen(t *testing.T) {
	m := NewMerger()
	merge(m, snap(file, pod("a@1", static(file), seenAt("first"))))
	updates := merge(m, snap(file, pod("a@1", static(file), seenAt("second"), label("v", "2"))))
	require.Equal(t, []string{"UPDATE file a@1"}, render(updates))
	assert.Equal(t, "first", updates[0].Pods[0].Annotations[podutil.ConfigFirstSeenAnnotationKey])
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{REMOVE: "REMOVE", ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE", RECONCILE: "RECONCILE", Op(9): "Op(9)"} {
		assert.Equal(t, want, op.String())
	}
}

// BenchmarkMergerOneChangeIn10k: a full API snapshot of 10,000 pods in which one pod changed.
// Unchanged pods are the informer's same objects, so they cost a map lookup each.
func BenchmarkMergerOneChangeIn10k(b *testing.B) {
	pods := make([]*corev1.Pod, 10000)
	for i := range pods {
		pods[i] = pod(fmt.Sprintf("p%d@%d", i, i), rv("1"))
	}
	m := NewMerger()
	merge(m, snap(api, pods...))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next := append([]*corev1.Pod(nil), pods...)
		next[i%len(next)] = pod(fmt.Sprintf("p%d@%d", i%len(next), i%len(next)), rv(fmt.Sprint(i+2)), label("n", fmt.Sprint(i)))
		if got := merge(m, snap(api, next...)); len(got) != 1 {
			b.Fatalf("want one update, got %v", render(got))
		}
		pods = next
	}
}

// scriptedSource sends the snapshots the test gives it.
type scriptedSource struct {
	name  string
	snaps chan Snapshot
}

func (s *scriptedSource) Name() string { return s.name }

func (s *scriptedSource) Run(ctx context.Context, out chan<- Snapshot) {
	for {
		select {
		case <-ctx.Done():
			return
		case snap := <-s.snaps:
			select {
			case out <- snap:
			case <-ctx.Done():
				return
			}
		}
	}
}

func receive(t *testing.T, mux *Mux) string {
	t.Helper()
	return render([]PodUpdate{next(t, mux)})[0]
}

func next(t *testing.T, mux *Mux) PodUpdate {
	t.Helper()
	select {
	case u := <-mux.Updates():
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no update")
		return PodUpdate{}
	}
}

// ready reports whether mux.Ready is closed, without waiting.
func ready(mux *Mux) bool {
	select {
	case <-mux.Ready():
		return true
	default:
		return false
	}
}

func TestMux(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	files := &scriptedSource{name: file, snaps: make(chan Snapshot)}
	apis := &scriptedSource{name: api, snaps: make(chan Snapshot)}
	problems := make(chan Problem, 10)
	mux := NewMux(ProblemReporterFunc(func(p Problem) { problems <- p }), files, apis)
	go mux.Run(ctx)

	// A slow consumer: many snapshots are merged before anything is read, none is lost.
	files.snaps <- snap(file, pod("a@1", static(file)))
	const n = 50
	for i := 2; i <= n; i++ {
		files.snaps <- snap(file, pod(fmt.Sprintf("a@%d", i), static(file)))
	}
	u := next(t, mux)
	assert.Equal(t, "ADD file a@1", render([]PodUpdate{u})[0])
	assert.True(t, u.SourceSeen, "the last update of the file source's first snapshot")
	for i := 2; i <= n; i++ {
		u := next(t, mux)
		assert.Equal(t, fmt.Sprintf("REMOVE file a@%d", i-1), render([]PodUpdate{u})[0])
		assert.False(t, u.SourceSeen)
		assert.Equal(t, fmt.Sprintf("ADD file a@%d", i), receive(t, mux))
	}
	assert.False(t, ready(mux), "the API source is not seen yet")

	// The API source's pod with the same name is rejected and reported. The snapshot goes twice
	// more (changing nothing), so that the first is merged before Ready is looked at: a source
	// takes its next snapshot only once the Mux has received the previous one, and the Mux
	// merges a snapshot before it receives the next.
	first := snap(api, pod("a@x", rv("1")), pod("b@y", rv("1")))
	for range 3 {
		apis.snaps <- first
	}
	assert.False(t, ready(mux), "not ready before the last source's first updates are received")
	assert.Equal(t, "ADD api b@y", receive(t, mux))
	select {
	case <-mux.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready after every source was seen")
	}
	p := <-problems
	assert.ErrorIs(t, p.Err, ErrDuplicateName)

	cancel()
	<-mux.Done()
	_, open := <-mux.Updates()
	assert.False(t, open, "Updates is closed when Run returns")
}

func TestMuxWithoutSources(t *testing.T) {
	mux := NewMux(nil)
	ctx, cancel := context.WithCancel(context.Background())
	go mux.Run(ctx)
	<-mux.Ready()
	cancel()
	<-mux.Done()
}

// Only a full snapshot makes a source seen: a partial one before it is delivered, but without
// SourceSeen, and partial ones after it never carry SourceSeen again.
func TestMuxSeenOnlyByAFullSnapshot(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	apis := &scriptedSource{name: api, snaps: make(chan Snapshot)}
	mux := NewMux(nil, apis)
	go mux.Run(ctx)
	defer func() { cancel(); <-mux.Done() }()

	apis.snaps <- delta(api, nil, pod("a@1", rv("1")))
	u := next(t, mux)
	assert.Equal(t, "ADD api a@1", render([]PodUpdate{u})[0])
	assert.False(t, u.SourceSeen)
	assert.False(t, ready(mux), "a partial snapshot does not make the only source seen")

	apis.snaps <- snap(api, pod("a@1", rv("1")), pod("b@2", rv("1")))
	u = next(t, mux)
	assert.Equal(t, "ADD api b@2", render([]PodUpdate{u})[0])
	assert.True(t, u.SourceSeen)

	apis.snaps <- delta(api, []string{"1"})
	u = next(t, mux)
	assert.Equal(t, "REMOVE api a@1", render([]PodUpdate{u})[0])
	assert.False(t, u.SourceSeen)
	select {
	case <-mux.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
}

// Once every source is seen, one line counts the pods from each; nothing more is said about it.
func TestMuxSaysOnceWhenEverySourceIsSeen(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(0)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	files := &scriptedSource{name: file, snaps: make(chan Snapshot)}
	apis := &scriptedSource{name: api, snaps: make(chan Snapshot)}
	mux := NewMux(nil, files, apis)
	go mux.Run(ctx)
	defer func() {
		cancel()
		<-mux.Done()
	}()
	logs := func() string { return logger.GetSink().(ktesting.Underlier).GetBuffer().String() }

	files.snaps <- snap(file, pod("a@1", static(file)), pod("b@2", static(file)))
	next(t, mux)
	assert.NotContains(t, logs(), "Every pod source seen", "the API source is not seen yet")
	apis.snaps <- snap(api, pod("c@3"))
	next(t, mux)
	<-mux.Ready()
	files.snaps <- snap(file, pod("a@1", static(file)))
	next(t, mux)
	assert.Equal(t, 1, strings.Count(logs(), "Every pod source seen"), logs())
	assert.Contains(t, logs(), `file=2 api=1`)
}

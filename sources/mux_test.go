package sources

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

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

package sources

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
)

func TestFileChangesSortsEvents(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "manifests")
	require.NoError(t, os.Mkdir(dir, 0o755))
	single := filepath.Join(root, "only.yaml")
	require.NoError(t, os.WriteFile(single, []byte("x"), 0o644))
	in := func(name string) string { return filepath.Join(dir, name) }
	watchedDir := &dirWatch{path: dir, parent: root, dirWatched: true}
	singleFile := &dirWatch{path: single, parent: root}

	type want struct {
		relist           bool
		created, written []string
	}
	for _, tc := range []struct {
		name string
		w    *dirWatch
		evs  watchEvents
		want want
	}{
		{"an atomic write: the manifest now, the temporary file not at all", watchedDir,
			watchEvents{ops: map[string]fsnotify.Op{in(".a.yaml.tmp"): fsnotify.Create | fsnotify.Write | fsnotify.Rename, in("a.yaml"): fsnotify.Create}},
			want{created: []string{in("a.yaml")}, written: []string{in("a.yaml")}}},
		{"writes, removals, renames away and mode changes wait for the debounce", watchedDir,
			watchEvents{ops: map[string]fsnotify.Op{in("a.yaml"): fsnotify.Write, in("b.yml"): fsnotify.Remove, in("c.json"): fsnotify.Rename, in("d.yaml"): fsnotify.Chmod}},
			want{written: []string{in("a.yaml"), in("b.yml"), in("c.json"), in("d.yaml")}}},
		{"editor leftovers and other names are ignored", watchedDir,
			watchEvents{ops: map[string]fsnotify.Op{in("a.yaml~"): fsnotify.Create, in("a.yaml.swp"): fsnotify.Write, in("notes.txt"): fsnotify.Create, in(".hidden.yaml"): fsnotify.Create}},
			want{}},
		{"a ConfigMap's ..data swap re-lists", watchedDir,
			watchEvents{ops: map[string]fsnotify.Op{in("..data"): fsnotify.Create, in("a.yaml"): fsnotify.Write}},
			want{relist: true, written: []string{in("a.yaml")}}},
		{"the directory itself replaced re-lists", watchedDir,
			watchEvents{ops: map[string]fsnotify.Op{dir: fsnotify.Create}},
			want{relist: true}},
		{"a failed watch re-lists", watchedDir, watchEvents{failed: true}, want{relist: true}},
		{"the single file replaced atomically is read now", singleFile,
			watchEvents{ops: map[string]fsnotify.Op{single: fsnotify.Create, filepath.Join(root, "other.yaml"): fsnotify.Create}},
			want{created: []string{single}, written: []string{single}}},
		{"the single file removed waits for the debounce", singleFile,
			watchEvents{ops: map[string]fsnotify.Op{single: fsnotify.Remove}},
			want{written: []string{single}}},
		{"a ..-name next to the single file re-lists", singleFile,
			watchEvents{ops: map[string]fsnotify.Op{filepath.Join(root, "..data"): fsnotify.Create}},
			want{relist: true}},
		{"a directory created at the path of an unwatched one re-lists (to watch it)", &dirWatch{path: dir, parent: root},
			watchEvents{ops: map[string]fsnotify.Op{dir: fsnotify.Create}},
			want{relist: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c fileChanges
			c.add(tc.evs, tc.w)
			assert.Equal(t, tc.want.relist, c.relist, "relist")
			assert.Equal(t, tc.want.written, nilIfEmpty(sortedKeys(c.written)), "written")
			assert.Equal(t, tc.want.created, nilIfEmpty(c.takeCreated()), "created")
			assert.Empty(t, c.created, "taken")
			assert.Equal(t, tc.want.relist || len(tc.want.written) > 0, c.debounced())
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// A change re-reads only the files fsnotify named; the others keep what was read before.
func TestFileSourceRereadsOnlyNamedFiles(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	require.NoError(t, os.WriteFile(a, []byte(podYAML("a", 1)), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(podYAML("b", 1)), 0o644))
	src, err := NewFileSource(FileConfig{Path: dir, NodeName: "node-a"})
	require.NoError(t, err)
	before, _ := src.list(ctx)
	require.Len(t, before.Pods, 2)

	require.NoError(t, os.WriteFile(a, []byte(podYAML("a", 2)), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(podYAML("b", 2)), 0o644))
	require.True(t, src.reread(ctx, []string{a}, false))
	after := src.snapshot()
	require.Len(t, after.Pods, 2)
	assert.NotEqual(t, before.Pods[0].UID, after.Pods[0].UID, "a was named: read again")
	assert.Same(t, before.Pods[1], after.Pods[1], "b was not named: not read")

	require.NoError(t, os.Remove(a))
	src.reread(ctx, []string{a}, false)
	assert.Equal(t, []string{"b-node-a"}, podNames(src.snapshot()), "a named file that is gone is forgotten")
	assert.Equal(t, []string{"b-node-a"}, podNames(mustList(t, ctx, src)), "the full re-list reads b again")
	assert.NotEqual(t, before.Pods[1].UID, src.snapshot().Pods[0].UID)
}

func podNames(s Snapshot) []string {
	var names []string
	for _, p := range s.Pods {
		names = append(names, p.Name)
	}
	return names
}

// startFileSourceWithClock runs a file source whose debounce only the test ends.
func startFileSourceWithClock(t *testing.T, path string) (*sourceHarness, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	src, err := NewFileSource(FileConfig{Path: path, NodeName: "node-a", CheckFrequency: time.Hour, Clock: clk})
	require.NoError(t, err)
	return startHarness(t, func(ctx context.Context, h *sourceHarness) {
		src.cfg.Problems = h.reporter()
		src.Run(ctx, h.out)
	}), clk
}

// debounceStarted waits for the debounce timer (beside the re-list ticker).
func debounceStarted(t *testing.T, clk *testingclock.FakeClock) {
	t.Helper()
	require.Eventually(t, func() bool { return clk.Waiters() == 2 }, observeWithin, time.Millisecond, "a debounce pending")
}

// autoStep ends every debounce as soon as it starts, until the test ends.
func autoStep(t *testing.T, clk *testingclock.FakeClock) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if clk.Waiters() >= 2 {
				clk.Step(fileDebounce)
			}
			time.Sleep(time.Millisecond) // polling, not waiting for an outcome
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func TestFileSourceEditLatency(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(a, []byte(podYAML("a", 1)), 0o644))
	h, clk := startFileSourceWithClock(t, dir)
	h.expect(observeWithin, "ADD file a-node-a")
	v1 := h.uidOf("a-node-a")

	// An edit in place (writes, no create) waits for the debounce.
	require.NoError(t, os.WriteFile(a, []byte(podYAML("a", 2)), 0o644))
	debounceStarted(t, clk)
	h.quiet(100 * time.Millisecond)
	clk.Step(fileDebounce)
	v2 := h.expectEdit("a-node-a", v1)

	// An atomic edit (the new file renamed into place) is applied at once: the fake clock
	// never moves.
	writeAtomic(t, a, podYAML("a", 3))
	h.expectEdit("a-node-a", v2)

	// A file created and then written (not atomically) is never applied half-written or
	// reported as bad in between; it is applied once.
	autoStep(t, clk)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(podYAML("b", 1)), 0o644))
	h.expect(observeWithin, "ADD file b-node-a")
	h.quiet(50 * time.Millisecond)
	h.noProblem()
}

// A bad manifest renamed into place is not reported before the debounce (it may be a file
// still being written), then is reported once.
func TestFileSourceCreatedBadManifestWaitsForTheDebounce(t *testing.T) {
	dir := t.TempDir()
	h, clk := startFileSourceWithClock(t, dir)
	h.expect(observeWithin)
	c := filepath.Join(dir, "c.yaml")
	writeAtomic(t, c, "apiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec: {containers: [{name: Bad_Name, image: i}]}\n")
	debounceStarted(t, clk)
	h.quiet(100 * time.Millisecond)
	h.noProblem()
	clk.Step(fileDebounce)
	p := h.problem(observeWithin)
	assert.Equal(t, c, p.Location)
	assert.ErrorIs(t, p.Err, ErrInvalid)
}

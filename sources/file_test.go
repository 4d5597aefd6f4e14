package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/vk-static/vk-static/podutil"
)

// observeWithin is how soon a file change must show up. The re-list runs hourly in these tests,
// so only fsnotify can make them pass.
const observeWithin = time.Second

// sourceHarness runs a source and merges its snapshots, so tests read like transcripts.
type sourceHarness struct {
	t          *testing.T
	out        chan Snapshot
	merger     *Merger
	problems   chan Problem
	recoveries chan Problem
	last       Snapshot
}

func startHarness(t *testing.T, run func(ctx context.Context, h *sourceHarness)) *sourceHarness {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h := &sourceHarness{t: t, out: make(chan Snapshot), merger: NewMerger(), problems: make(chan Problem, 100), recoveries: make(chan Problem, 100)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		run(ctx, h)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		goleak.VerifyNone(t, leaks)
	})
	return h
}

var uidSuffix = regexp.MustCompile(`@[^ ]*`)

func linesMatch(lines, want []string) bool {
	for i := range want {
		if lines[i] != want[i] && uidSuffix.ReplaceAllString(lines[i], "") != want[i] {
			return false
		}
	}
	return true
}

func (h *sourceHarness) reporter() ProblemReporter { return harnessReporter{h} }

// harnessReporter hands problems and recoveries to the test.
type harnessReporter struct{ h *sourceHarness }

func (r harnessReporter) ReportProblem(p Problem)  { r.h.problems <- p }
func (r harnessReporter) ReportRecovery(p Problem) { r.h.recoveries <- p }

// recovery waits for a recovery to be reported.
func (h *sourceHarness) recovery(within time.Duration) Problem {
	h.t.Helper()
	select {
	case p := <-h.recoveries:
		return p
	case <-time.After(within):
		h.t.Fatal("no recovery reported")
		return Problem{}
	}
}

// mustList lists src, which must be available.
func mustList(t *testing.T, ctx context.Context, src *FileSource) Snapshot {
	t.Helper()
	snap, ok := src.list(ctx)
	require.True(t, ok, "the manifest path is unavailable")
	return snap
}

// expect merges snapshots until the updates since the call match want, failing after within.
// A want line matches the update rendered with UIDs ("ADD file a@1 b@2") or without
// ("ADD file a b"). With no want it waits for one snapshot that causes no updates.
func (h *sourceHarness) expect(within time.Duration, want ...string) {
	h.t.Helper()
	deadline := time.After(within)
	var got []string
	for {
		if len(got) > len(want) || !linesMatch(got, want[:min(len(got), len(want))]) {
			h.t.Fatalf("updates %q, want %q", got, want)
		}
		if len(want) > 0 && len(got) == len(want) {
			return
		}
		select {
		case s := <-h.out:
			h.last = s
			got = append(got, render(merge(h.merger, s))...)
			if want == nil && h.merger.Seen(s.Source) && got == nil {
				return // an expected empty snapshot
			}
		case <-deadline:
			h.t.Fatalf("after %v: updates %q, want %q", within, got, want)
		}
	}
}

// quiet checks that no snapshot with updates arrives for a short while (used after changes that
// must not matter; a positive expect afterwards proves the source was still alive).
func (h *sourceHarness) quiet(d time.Duration) {
	h.t.Helper()
	timeout := time.After(d)
	for {
		select {
		case s := <-h.out:
			if u := merge(h.merger, s); len(u) > 0 {
				h.t.Fatalf("unexpected updates %q", render(u))
			}
		case <-timeout:
			return
		}
	}
}

func (h *sourceHarness) problem(within time.Duration) Problem {
	h.t.Helper()
	select {
	case p := <-h.problems:
		return p
	case <-time.After(within):
		h.t.Fatal("no problem reported")
		return Problem{}
	}
}

func (h *sourceHarness) noProblem() {
	h.t.Helper()
	select {
	case p := <-h.problems:
		h.t.Fatalf("unexpected problem: %v", p)
	default:
	}
}

// podYAML is a minimal manifest; version makes an edit.
func podYAML(name string, version int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  labels: {version: \"%d\"}\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n", name, version)
}

// writeAtomic writes through a dotfile and renames it into place, like most tools do.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

func startFileSource(t *testing.T, path string) *sourceHarness {
	t.Helper()
	src, err := NewFileSource(FileConfig{Path: path, NodeName: "node-a", CheckFrequency: time.Hour})
	require.NoError(t, err)
	return startHarness(t, func(ctx context.Context, h *sourceHarness) {
		src.cfg.Problems = h.reporter()
		src.Run(ctx, h.out)
	})
}

func (h *sourceHarness) uidOf(name string) string {
	for _, p := range h.last.Pods {
		if p.Name == name {
			return string(p.UID)
		}
	}
	h.t.Fatalf("no pod %s in the last snapshot", name)
	return ""
}

func TestFileSourceDirectoryLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	require.NoError(t, os.Mkdir(dir, 0o755))
	h := startFileSource(t, dir)
	h.expect(observeWithin) // empty directory: an empty snapshot, seen
	require.True(t, h.merger.Seen(podutil.FileSource))

	// add
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(podYAML("a", 1)), 0o644))
	h.expect(observeWithin, "ADD file a-node-a")
	// The UID is not known in advance; the transcript compares names, so re-render with it.
	v1 := h.uidOf("a-node-a")

	// edit in place (after the add settled): a new UID
	writeAtomic(t, filepath.Join(dir, "a.yaml"), podYAML("a", 2))
	v2 := h.expectEdit("a-node-a", v1)

	// atomic rename over the file
	writeAtomic(t, filepath.Join(dir, "a.yaml"), podYAML("a", 3))
	v3 := h.expectEdit("a-node-a", v2)

	// editor leftovers and dotfiles never count
	for _, name := range []string{".hidden.yaml", "web.yaml.swp", "web.yaml~", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(podYAML("must-not-appear", 1)), 0o644))
	}
	h.quiet(200 * time.Millisecond)

	// remove
	require.NoError(t, os.Remove(filepath.Join(dir, "a.yaml")))
	h.expect(observeWithin, "REMOVE file a-node-a@"+v3)

	// A second pod, then the directory removed: unavailable, reported, and b keeps running
	// (before, a missing directory was an empty set and b was removed at once).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}`), 0o644))
	h.expect(observeWithin, "ADD file b-node-a")
	b := h.uidOf("b-node-a")
	h.noProblem()
	require.NoError(t, os.RemoveAll(dir))
	p := h.problem(observeWithin)
	assert.ErrorIs(t, p.Err, ErrSourceUnavailable)
	assert.ErrorIs(t, p.Err, os.ErrNotExist)
	assert.Equal(t, dir, p.Location)
	h.quiet(200 * time.Millisecond)

	// Recreated with another manifest: the full list decides, so b stops only now, and c runs.
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yml"), []byte(podYAML("c", 1)), 0o644))
	h.expect(observeWithin, "REMOVE file b-node-a@"+b, "ADD file c-node-a")
	assert.Equal(t, dir, h.recovery(observeWithin).Location)
	h.noProblem()
}

// expectEdit waits for REMOVE(old) + ADD(new) of name and returns the new UID.
func (h *sourceHarness) expectEdit(name, oldUID string) string {
	h.t.Helper()
	deadline := time.After(observeWithin)
	var got []string
	for len(got) < 2 {
		select {
		case s := <-h.out:
			h.last = s
			got = append(got, render(merge(h.merger, s))...)
		case <-deadline:
			h.t.Fatalf("after %v: updates %q, want REMOVE + ADD of %s", observeWithin, got, name)
		}
	}
	newUID := h.uidOf(name)
	require.NotEqual(h.t, oldUID, newUID, "an edit must change the UID")
	require.Equal(h.t, []string{"REMOVE file " + name + "@" + oldUID, "ADD file " + name + "@" + newUID}, got)
	return newUID
}

// A ConfigMap volume publishes files through a "..data" symlink that is swapped atomically.
func TestFileSourceConfigMapSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	publish := func(version int) {
		ts := filepath.Join(dir, fmt.Sprintf("..2030_01_01_00_00_0%d", version))
		require.NoError(t, os.Mkdir(ts, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ts, "pod.yaml"), []byte(podYAML("cm", version)), 0o644))
		require.NoError(t, os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data_tmp")))
		require.NoError(t, os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")))
	}
	publish(1)
	require.NoError(t, os.Symlink("..data/pod.yaml", filepath.Join(dir, "pod.yaml")))

	h := startFileSource(t, dir)
	h.expect(observeWithin, "ADD file cm-node-a")
	v1 := h.uidOf("cm-node-a")
	publish(2)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "..2030_01_01_00_00_01")))
	h.expectEdit("cm-node-a", v1)
}

// The watched path itself is a symlink that is re-pointed to another directory.
func TestFileSourceRepointedDirectorySymlink(t *testing.T) {
	root := t.TempDir()
	for i, name := range []string{"one", "two"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name, "p.yaml"), []byte(podYAML(name, i)), 0o644))
	}
	link := filepath.Join(root, "manifests")
	require.NoError(t, os.Symlink("one", link))
	h := startFileSource(t, link)
	h.expect(observeWithin, "ADD file one-node-a")
	one := h.uidOf("one-node-a")

	require.NoError(t, os.Symlink("two", link+".new"))
	require.NoError(t, os.Rename(link+".new", link))
	h.expect(observeWithin, "REMOVE file one-node-a@"+one, "ADD file two-node-a@"+h.peekUID(link, "two"))

	// The new target is watched, not the old one.
	require.NoError(t, os.WriteFile(filepath.Join(root, "two", "q.yaml"), []byte(podYAML("q", 1)), 0o644))
	h.expect(observeWithin, "ADD file q-node-a@"+h.peekUID(link, "q"))
}

// peekUID decodes the file the source will read, to predict the UID in a transcript.
func (h *sourceHarness) peekUID(dir, name string) string {
	h.t.Helper()
	path := filepath.Join(dir, "p.yaml")
	if name == "q" {
		path = filepath.Join(dir, "q.yaml")
	}
	data, err := os.ReadFile(path)
	require.NoError(h.t, err)
	pods, err := DecodeManifest(data, DecodeOptions{NodeName: "node-a", Source: podutil.FileSource, Location: path})
	require.NoError(h.t, err)
	return string(pods[0].UID)
}

func TestFileSourceBadFileKeepsLastGoodPods(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(path, []byte(podYAML("a", 1)), 0o644))
	h := startFileSource(t, dir)
	h.expect(observeWithin, "ADD file a-node-a")
	v1 := h.uidOf("a-node-a")

	writeAtomic(t, path, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: Bad_Name, image: i}]}\n")
	p := h.problem(observeWithin)
	assert.Equal(t, podutil.FileSource, p.Source)
	assert.Equal(t, path, p.Location)
	assert.ErrorIs(t, p.Err, ErrInvalid)
	assert.Contains(t, p.Err.Error(), "Bad_Name")

	// The same bad content again (touched): not reported again, the pod still runs.
	require.NoError(t, os.Chtimes(path, time.Now(), time.Now()))
	// A good file elsewhere proves the source re-listed after the touch.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(podYAML("b", 1)), 0o644))
	h.expect(observeWithin, "ADD file b-node-a")
	assert.Equal(t, v1, h.uidOf("a-node-a"), "the bad file's last good pod is kept")
	h.noProblem()

	// Fixed: the pod is replaced by the fixed one.
	writeAtomic(t, path, podYAML("a", 2))
	h.expectEdit("a-node-a", v1)
}

// A manifest that does not decode when the source starts (after an agent restart, say) has no
// last good pod to keep: the source names it as unreadable, so that the pod the provider still
// runs from it is kept. Fixing or removing the file ends that.
func TestFileSourceUnreadableAtStart(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a\n"), 0o644))
	h := startFileSource(t, dir)
	h.expect(observeWithin, "RECONCILE file unreadable="+bad)
	assert.True(t, h.merger.Seen(podutil.FileSource))
	assert.Equal(t, bad, h.problem(observeWithin).Location)

	writeAtomic(t, bad, podYAML("a", 1))
	h.expect(observeWithin, "RECONCILE file unreadable=", "ADD file a-node-a")
	assert.Equal(t, bad, h.last.Pods[0].Annotations[podutil.ConfigFileAnnotationKey], "the pod names its manifest")

	// Bad again while running: the last good pod is kept, so the file is not unreadable.
	writeAtomic(t, bad, "kind: Nonsense\n")
	h.problem(observeWithin)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("{{"), 0o644))
	h.expect(observeWithin, "RECONCILE file unreadable="+filepath.Join(dir, "b.yaml"))
	require.NoError(t, os.Remove(filepath.Join(dir, "b.yaml")))
	h.expect(observeWithin, "RECONCILE file unreadable=")
}

func TestFileSourceDuplicateNameAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1-first.yaml"), []byte(podYAML("same", 1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2-second.yaml"), []byte(podYAML("same", 2)), 0o644))
	h := startFileSource(t, dir)
	s := <-h.out
	require.Len(t, s.Pods, 2, "the source sends both; the merger decides")
	updates, problems := h.merger.MergeAndReport(s)
	require.Len(t, updates, 1)
	assert.Equal(t, s.Pods[0], updates[0].Pods[0], "the first file by name keeps the name")
	require.Len(t, problems, 1)
	assert.Equal(t, filepath.Join(dir, "2-second.yaml"), problems[0].Location)
	assert.ErrorIs(t, problems[0].Err, ErrDuplicateName)
}

func TestFileSourceSingleFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "only.yaml")
	h := startFileSource(t, path)
	// Missing: reported, and not seen.
	assert.ErrorIs(t, h.problem(observeWithin).Err, ErrSourceUnavailable)
	h.quiet(100 * time.Millisecond)
	assert.False(t, h.merger.Seen(podutil.FileSource))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(podYAML("other", 1)), 0o644))
	writeAtomic(t, path, podYAML("only", 1))
	h.expect(observeWithin, "ADD file only-node-a")
	v1 := h.uidOf("only-node-a")
	h.recovery(observeWithin)

	// Removed: the path is unavailable, so its pod is kept until it is back.
	require.NoError(t, os.Remove(path))
	assert.ErrorIs(t, h.problem(observeWithin).Err, ErrSourceUnavailable)
	h.quiet(100 * time.Millisecond)
	// Emptied: no pods.
	writeAtomic(t, path, "")
	h.expect(observeWithin, "REMOVE file only-node-a@"+v1)
}

func TestNewFileSourceValidates(t *testing.T) {
	_, err := NewFileSource(FileConfig{NodeName: "n"})
	assert.Error(t, err)
	_, err = NewFileSource(FileConfig{Path: "/x"})
	assert.Error(t, err)
	_, err = NewFileSource(FileConfig{Path: "/x", NodeName: "n", CheckFrequency: -1})
	assert.Error(t, err)
}

// A manifest path that is missing is reported once, naming the path and the reason, and so is
// its appearance — not once per re-list; while it is missing nothing is sent, so the source is
// not seen, and once it was seen its last snapshot stands.
func TestFileSourceReportsAMissingPathOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late", "manifests")
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(0)))
	ctx := klog.NewContext(context.Background(), logger)
	var problems, recoveries []Problem
	src, err := NewFileSource(FileConfig{Path: path, NodeName: "node-a", CheckFrequency: time.Hour, Problems: recorder{&problems, &recoveries}})
	require.NoError(t, err)

	for range 3 {
		_, ok := src.list(ctx)
		assert.False(t, ok, "nothing to send for a missing path")
	}
	require.Len(t, problems, 1, "missing: reported once over three re-lists")
	assert.Equal(t, path, problems[0].Location)
	assert.ErrorIs(t, problems[0].Err, ErrSourceUnavailable)
	assert.Contains(t, problems[0].Err.Error(), path+": no such file or directory", "names the path and the reason")

	require.NoError(t, os.MkdirAll(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "a.yaml"), []byte(podYAML("a", 1)), 0o644))
	for range 3 {
		assert.Len(t, mustList(t, ctx, src).Pods, 1)
	}
	require.Len(t, recoveries, 1, "appeared: said once")
	assert.Equal(t, path, recoveries[0].Location)

	require.NoError(t, os.RemoveAll(path))
	_, ok := src.list(ctx)
	assert.False(t, ok)
	assert.Len(t, problems, 2, "missing again: said again")
	assert.Len(t, src.snapshot().Pods, 1, "the last snapshot stands")
	assert.Empty(t, logger.GetSink().(ktesting.Underlier).GetBuffer().String(), "the reporter logs, not the source")
}

// Without a RecoveryReporter, the source logs the recovery itself.
func TestFileSourceLogsRecoveryWithoutRecoveryReporter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifests")
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(0)))
	ctx := klog.NewContext(context.Background(), logger)
	src, err := NewFileSource(FileConfig{Path: path, NodeName: "node-a"})
	require.NoError(t, err)
	src.list(ctx)
	src.list(ctx)
	require.NoError(t, os.Mkdir(path, 0o755))
	mustList(t, ctx, src)
	mustList(t, ctx, src)
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	assert.Equal(t, 1, strings.Count(logs, "Manifest source unavailable"), logs)
	assert.Equal(t, 1, strings.Count(logs, "Manifest source available again"), logs)
}

// recorder is a RecoveryReporter appending to slices, for a source driven by the test itself.
type recorder struct{ problems, recoveries *[]Problem }

func (r recorder) ReportProblem(p Problem)  { *r.problems = append(*r.problems, p) }
func (r recorder) ReportRecovery(p Problem) { *r.recoveries = append(*r.recoveries, p) }

// The scenario, on the source alone: started with a directory that does not exist (its
// parent neither), it is not seen; created later, it is picked up at once through the watches;
// turned into a symlink to the same files (missing for a moment in between), nothing changes;
// the symlink switched atomically to another directory, the new pods replace the old ones.
func TestFileSourceManifestPathAppearsVanishesAndMoves(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "etc", "manifests")
	h := startFileSource(t, path)
	p := h.problem(observeWithin)
	assert.ErrorIs(t, p.Err, ErrSourceUnavailable)
	assert.Equal(t, path, p.Location)
	h.quiet(200 * time.Millisecond)
	require.False(t, h.merger.Seen(podutil.FileSource), "a missing path is not seen")

	// Created (its parent too): the source re-establishes its watches and lists it.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "v1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "v1", "a.yaml"), []byte(podYAML("a", 1)), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "v1"), path))
	// The parent was missing, so only the watch retry or the re-list can see it: the retry's
	// back-off is short at first.
	h.expect(15*time.Second, "ADD file a-node-a")
	require.True(t, h.merger.Seen(podutil.FileSource))
	a := h.uidOf("a-node-a")
	h.recovery(observeWithin)

	// The watch on the new directory works.
	require.NoError(t, os.WriteFile(filepath.Join(path, "b.yaml"), []byte(podYAML("b", 1)), 0o644))
	h.expect(observeWithin, "ADD file b-node-a")
	b := h.uidOf("b-node-a")

	// The symlink removed and put back: missing for a moment, no pod disturbed.
	require.NoError(t, os.Remove(path))
	h.problem(observeWithin)
	require.NoError(t, os.Symlink(filepath.Join(root, "v1"), path))
	h.recovery(observeWithin)
	h.quiet(200 * time.Millisecond)

	// Switched atomically to v2, which has b (same content, same path: the same pod) and c.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "v2"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "v2", "b.yaml"), []byte(podYAML("b", 1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "v2", "c.yaml"), []byte(podYAML("c", 1)), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(root, "v2"), path+".tmp"))
	require.NoError(t, os.Rename(path+".tmp", path))
	h.expect(observeWithin, "REMOVE file a-node-a@"+a, "ADD file c-node-a")
	assert.Equal(t, b, h.uidOf("b-node-a"), "b is in both: undisturbed")

	// The new target is watched.
	require.NoError(t, os.Remove(filepath.Join(root, "v2", "c.yaml")))
	h.expect(observeWithin, "REMOVE file c-node-a")
	h.noProblem()
}

// A directory that exists but cannot be listed is unavailable too: its pods are kept. Root can
// list any directory, so as root the test runs again as nobody (runAsNobody).
func TestFileSourceUnlistableDirectoryKeepsPods(t *testing.T) {
	if runAsNobody(t) {
		return
	}
	dir := filepath.Join(t.TempDir(), "manifests")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(podYAML("a", 1)), 0o644))
	h := startFileSource(t, dir)
	h.expect(observeWithin, "ADD file a-node-a")
	require.NoError(t, os.Chmod(dir, 0))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	// A change in the parent makes the source re-list.
	require.NoError(t, os.Rename(dir, dir+".x"))
	require.NoError(t, os.Rename(dir+".x", dir))
	p := h.problem(observeWithin)
	assert.ErrorIs(t, p.Err, os.ErrPermission)
	h.quiet(200 * time.Millisecond)
}

// A FIFO in the manifest directory blocked the source in its open, for good: from then on
// nothing in the directory was acted on. What is not a regular file — a FIFO, or a symbolic
// link to a device — is a problem that names it, and the rest is read as ever.
func TestFileSourceSkipsWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "zz.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	device := filepath.Join(dir, "null.yaml")
	require.NoError(t, os.Symlink("/dev/null", device))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(podYAML("a", 1)), 0o644))
	h := startFileSource(t, dir)
	h.expect(observeWithin, "RECONCILE file unreadable="+device+","+fifo, "ADD file a-node-a")
	seen := map[string]error{}
	for range 2 {
		p := h.problem(observeWithin)
		seen[p.Location] = p.Err
	}
	for path, kind := range map[string]string{fifo: "a named pipe", device: "a character device"} {
		require.ErrorIs(t, seen[path], ErrNotRegular, path)
		assert.Contains(t, seen[path].Error(), kind)
	}

	// The source still acts on the directory.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(podYAML("b", 1)), 0o644))
	h.expect(observeWithin, "ADD file b-node-a")
}

func TestReadManifestFileNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pod.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err := ReadManifestFile(fifo, "node-a")
	require.ErrorIs(t, err, ErrNotRegular)
}

package sources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
	t        *testing.T
	out      chan Snapshot
	merger   *Merger
	problems chan Problem
	last     Snapshot
}

func startHarness(t *testing.T, run func(ctx context.Context, h *sourceHarness)) *sourceHarness {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	h := &sourceHarness{t: t, out: make(chan Snapshot), merger: NewMerger(), problems: make(chan Problem, 100)}
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

func (h *sourceHarness) reporter() ProblemReporter {
	return ProblemReporterFunc(func(p Problem) { h.problems <- p })
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

	// a second pod, then the directory removed and recreated
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"i:1"}]}}`), 0o644))
	h.expect(observeWithin, "ADD file b-node-a")
	b := h.uidOf("b-node-a")
	require.NoError(t, os.RemoveAll(dir))
	h.expect(observeWithin, "REMOVE file b-node-a@"+b)
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yml"), []byte(podYAML("c", 1)), 0o644))
	h.expect(observeWithin, "ADD file c-node-a")
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
	h.expect(observeWithin) // missing file: empty, seen
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(podYAML("other", 1)), 0o644))
	writeAtomic(t, path, podYAML("only", 1))
	h.expect(observeWithin, "ADD file only-node-a")
	v1 := h.uidOf("only-node-a")
	require.NoError(t, os.Remove(path))
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

// A manifest path that is missing is said once at the default verbosity, and so is its
// appearance — not once per re-list (the watch retries say nothing at that verbosity).
func TestFileSourceReportsAMissingPathOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "late", "manifests")
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true), ktesting.Verbosity(0)))
	ctx := klog.NewContext(context.Background(), logger)
	src, err := NewFileSource(FileConfig{Path: path, NodeName: "node-a", CheckFrequency: time.Hour})
	require.NoError(t, err)
	logged := func(what string) int {
		return strings.Count(logger.GetSink().(ktesting.Underlier).GetBuffer().String(), what)
	}

	for range 3 {
		assert.Empty(t, src.list(ctx).Pods)
	}
	assert.Equal(t, 1, logged("The manifest path does not exist"), "missing: said once over three re-lists")

	require.NoError(t, os.MkdirAll(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "a.yaml"), []byte(podYAML("a", 1)), 0o644))
	for range 3 {
		assert.Len(t, src.list(ctx).Pods, 1)
	}
	assert.Equal(t, 1, logged("The manifest path can be read"), "appeared: said once")

	require.NoError(t, os.RemoveAll(path))
	src.list(ctx)
	assert.Equal(t, 2, logged("The manifest path does not exist"), "missing again: said again")
}

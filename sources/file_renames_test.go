package sources

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2/ktesting"
)

// renamedManifests are the two ways a renamed manifest collides with itself: by full name (its
// UID hashes the path, so the two copies differ) and, when it sets metadata.uid, by UID too.
var renamedManifests = map[string]string{
	"generated UID": podYAML("a", 1),
	"explicit UID":  strings.Replace(podYAML("a", 1), "  name: a\n", "  name: a\n  uid: 1234-abcd\n", 1),
}

// `mv a.yaml b.yaml` is a new pod for b.yaml (REMOVE + ADD, or nothing when the manifest sets its
// UID), never a Problem, and never two pods.
func TestFileSourceRenameIsNotAProblem(t *testing.T) {
	for name, manifest := range renamedManifests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			from, to := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
			require.NoError(t, os.WriteFile(from, []byte(manifest), 0o644))
			h, clk := startFileSourceWithClock(t, dir)
			h.expect(observeWithin, "ADD file a-node-a")

			require.NoError(t, os.Rename(from, to))
			// The debounce waits for the test, so this is the snapshot after the tentative read of
			// b.yaml, before a.yaml's removal is read.
			snap, _, problems := h.mergeNext(observeWithin)
			assert.Empty(t, problems, "problems from the merger")
			require.Equal(t, []string{to}, snapshotLocations(snap))
			assert.Equal(t, []string{"a-node-a"}, podNames(snap))

			// The debounced read of both names changes nothing: a later manifest is the only
			// change seen.
			debounceStarted(t, clk)
			clk.Step(fileDebounce)
			require.Eventually(t, func() bool { return clk.Waiters() == 1 }, observeWithin, time.Millisecond, "the debounce fired")
			c := filepath.Join(dir, "c.yaml")
			writeAtomic(t, c, podYAML("c", 1))
			snap, updates, problems := h.mergeNext(observeWithin)
			assert.Empty(t, problems, "problems from the merger")
			assert.Equal(t, []string{"ADD file c-node-a@" + h.uidOf("c-node-a")}, render(updates))
			assert.Equal(t, []string{to, c}, snapshotLocations(snap), "the renamed manifest runs once")
			h.noProblem()
		})
	}
}

// Whichever read sees the new name first, the tentative one (the old name's event not read yet)
// or the debounced one (the old name's event read by an earlier debounce, or still to come), the
// source never holds both names. A copy, whose original still exists, is a real duplicate and is
// kept for the merger to report.
func TestFileSourceRereadForgetsFilesRenamedAway(t *testing.T) {
	for name, manifest := range renamedManifests {
		for _, tentative := range []bool{true, false} {
			read := "debounced"
			if tentative {
				read = "tentative"
			}
			t.Run(name+", "+read, func(t *testing.T) {
				_, ctx := ktesting.NewTestContext(t)
				dir := t.TempDir()
				from, to, copied := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
				require.NoError(t, os.WriteFile(from, []byte(manifest), 0o644))
				src, err := NewFileSource(FileConfig{Path: dir, NodeName: "node-a"})
				require.NoError(t, err)
				require.Equal(t, []string{from}, snapshotLocations(mustList(t, ctx, src)))

				require.NoError(t, os.Rename(from, to))
				require.True(t, src.reread(ctx, []string{to}, tentative))
				assert.Equal(t, []string{to}, snapshotLocations(src.snapshot()), "renamed")

				require.NoError(t, os.WriteFile(copied, []byte(manifest), 0o644))
				require.True(t, src.reread(ctx, []string{copied}, tentative))
				assert.Equal(t, []string{"a-node-a", "a-node-a"}, podNames(src.snapshot()), "copied: both kept")
			})
		}
	}
}

// mergeNext merges the next snapshot, failing after within, and returns it with the updates and
// the problems it caused.
func (h *sourceHarness) mergeNext(within time.Duration) (Snapshot, []PodUpdate, []Problem) {
	h.t.Helper()
	select {
	case s := <-h.out:
		h.last = s
		updates, problems := h.merger.MergeAndReport(s)
		return s, updates, problems
	case <-time.After(within):
		h.t.Fatalf("no snapshot after %v", within)
		return Snapshot{}, nil, nil
	}
}

// snapshotLocations are the files of a snapshot's pods, sorted, one per pod.
func snapshotLocations(s Snapshot) []string {
	var locations []string
	for _, p := range s.Pods {
		locations = append(locations, s.Locations[p.UID])
	}
	slices.Sort(locations)
	return locations
}

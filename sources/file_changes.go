package sources

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// fileChanges is what collected watch events ask the file source to read. Only
// FileSource.Run's goroutine uses it.
//
// A manifest created or renamed into place (fsnotify reports both as Create; an atomic write is
// one) is read at once, so an edit does not wait for a debounce. That read is tentative: an
// empty or undecodable file is what a writer that creates and then writes leaves for a moment,
// so it is neither applied nor reported then, but read again after the short debounce, which
// every other change (writes, removals, renames away, mode changes) waits for so that a burst
// becomes one read; a manifest renamed within the directory is therefore seen under its new name
// before its old name is read again, and FileSource.forgetRenamedAway keeps the source from
// holding both. Only the named files are read; a change to the directory itself (replaced,
// re-pointed, a ConfigMap's "..data" swap) or a failed watch re-lists everything.
type fileChanges struct {
	relist  bool
	created map[string]bool
	written map[string]bool
}

// add sorts watch events into reads. source is the watched path; w tells whether it is a
// watched directory.
func (c *fileChanges) add(evs watchEvents, w *dirWatch) {
	if evs.failed {
		c.relist = true
	}
	for name, op := range evs.ops {
		switch {
		case name == w.path:
			// The path itself: a directory replaced or re-pointed (re-list and watch the new
			// one), or the single manifest file.
			if w.watchesDir() || (op.Has(fsnotify.Create) && isDirectory(name)) {
				c.relist = true
			} else {
				c.file(name, op)
			}
		case filepath.Dir(name) == w.path:
			base := filepath.Base(name)
			switch {
			case strings.HasPrefix(base, ".."):
				c.relist = true // a ConfigMap-style swap of "..data"
			case isManifestName(base):
				c.file(name, op)
			}
			// Other names (dotfiles such as a writer's temporary file, editor leftovers) are never
			// read, so their events change nothing.
		case filepath.Dir(name) == w.parent && strings.HasPrefix(filepath.Base(name), ".."):
			c.relist = true // a single file published by a ConfigMap-style swap
		}
	}
}

func (c *fileChanges) file(path string, op fsnotify.Op) {
	if op.Has(fsnotify.Create) {
		if c.created == nil {
			c.created = map[string]bool{}
		}
		c.created[path] = true
	}
	// Every change is also read after the debounce: a created file may still be being written.
	if c.written == nil {
		c.written = map[string]bool{}
	}
	c.written[path] = true
}

// takeCreated returns the created paths and forgets them.
func (c *fileChanges) takeCreated() []string {
	paths := sortedKeys(c.created)
	c.created = nil
	return paths
}

// debounced reports whether something waits for the debounce.
func (c *fileChanges) debounced() bool { return c.relist || len(c.written) > 0 }

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func isDirectory(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

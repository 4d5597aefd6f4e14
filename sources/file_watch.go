package sources

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	"github.com/vk-static/vk-static/internal/queue"
)

// dirWatch collects fsnotify events about a manifest path and signals that some arrived. It
// watches the path's parent (so that creating, removing, renaming or re-pointing the path itself
// is seen) and, when the path is a directory, the directory.
//
// establish, take and close are called by FileSource.Run's goroutine only; fsnotify's events are
// collected by one pump goroutine that close stops.
type dirWatch struct {
	path, parent string

	watcher    *fsnotify.Watcher
	dirWatched bool
	parentOK   bool

	// pending holds the operations seen on each name, OR'ed, since the last take; the name ""
	// stands for a failure (see record).
	pending *queue.Queue[string, fsnotify.Op]

	done    chan struct{}
	stopped chan struct{}
}

// watchEvents are the events collected since the last take: the operations seen on each name
// (one entry per name however many events, so a burst costs no more memory than the directory
// has names), and whether the watch overflowed or failed, when anything may have been missed.
type watchEvents struct {
	ops    map[string]fsnotify.Op
	failed bool
}

func newDirWatch(path string) *dirWatch {
	return &dirWatch{
		path: path, parent: filepath.Dir(path),
		pending: queue.New[string](orOps),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
}

// changed receives a signal after relevant events; a burst of events may be one signal. take
// returns them.
func (w *dirWatch) changed() <-chan struct{} { return w.pending.Ready() }

// take returns the events collected since the last take.
func (w *dirWatch) take() watchEvents {
	var evs watchEvents
	for _, it := range w.pending.Take() {
		if it.Key == "" {
			evs.failed = true
			continue
		}
		if evs.ops == nil {
			evs.ops = map[string]fsnotify.Op{}
		}
		evs.ops[it.Key] = it.Value
	}
	return evs
}

func orOps(old, new fsnotify.Op) fsnotify.Op { return old | new }

// watchesDir reports whether the path is a directory that is watched (else it is a single file,
// or missing).
func (w *dirWatch) watchesDir() bool { return w.dirWatched }

// incomplete reports whether something that exists is not watched: the parent, or the path
// when it is a directory.
func (w *dirWatch) incomplete() bool {
	return w.watcher == nil || !w.parentOK || (!w.dirWatched && isDirectory(w.path))
}

// establish (re)creates the watches and reports whether everything that exists is watched. It is
// idempotent and is called after every change, because the directory may have been replaced
// (removed and recreated, or a symlink re-pointed) and a watch on the old inode sees nothing.
func (w *dirWatch) establish(logger klog.Logger) bool {
	if w.watcher == nil {
		watcher, err := fsnotify.NewWatcher()
		if err != nil {
			logger.Error(err, "Cannot create a file watcher; relying on the periodic re-list until it can be")
			return false
		}
		w.watcher = watcher
		go w.pump(logger)
	}
	ok := true
	if !w.parentOK {
		if err := w.watcher.Add(w.parent); err != nil {
			logger.V(4).Info("Cannot watch the parent directory yet", "dir", w.parent, "err", err)
			ok = false
		} else {
			w.parentOK = true
		}
	}
	if w.dirWatched {
		// Drop the old watch: if the path was replaced it still points at the old directory.
		_ = w.watcher.Remove(w.path)
		w.dirWatched = false
	}
	if info, err := os.Stat(w.path); err == nil && info.IsDir() {
		if err := w.watcher.Add(w.path); err != nil {
			logger.V(4).Info("Cannot watch the manifest directory yet", "err", err)
			ok = false
		} else {
			w.dirWatched = true
		}
	}
	return ok
}

// pump forwards relevant fsnotify events as signals until close.
func (w *dirWatch) pump(logger klog.Logger) {
	defer close(w.stopped)
	watcher := w.watcher
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-watcher.Events:
			if !ok {
				return
			}
			if w.relevant(ev) {
				logger.V(5).Info("Manifest change", "event", ev.String())
				w.record(ev.Name, ev.Op)
			}
		case err, ok := <-watcher.Errors:
			if !ok {
				return
			}
			if err == fsnotify.ErrEventOverflow {
				// The parent watch may have been lost with the events; start over.
				logger.Error(err, "File watch overflowed; re-listing")
			} else {
				logger.Error(err, "File watch error; re-listing")
			}
			w.record("", 0)
		}
	}
}

// relevant: anything inside the watched directory (a ConfigMap-style swap renames "..data", so
// dotfiles count as events even though they are never read), and in the parent only the path
// itself and ".."-prefixed names (a single file published by a ConfigMap-style swap).
func (w *dirWatch) relevant(ev fsnotify.Event) bool {
	dir := filepath.Dir(ev.Name)
	if dir == w.path || ev.Name == w.path {
		return true
	}
	return dir == w.parent && strings.HasPrefix(filepath.Base(ev.Name), "..")
}

// record adds an event (name "" for a failure: no relevant event is unnamed) and signals. A
// name's events before the next take are one entry, their operations OR'ed: a burst costs one
// re-list, and no more memory than the directory has names.
func (w *dirWatch) record(name string, op fsnotify.Op) {
	w.pending.Add(name, op)
}

// close stops fsnotify and the pump goroutine and returns once they have stopped.
func (w *dirWatch) close() {
	close(w.done)
	if w.watcher != nil {
		_ = w.watcher.Close()
		<-w.stopped
	}
}
